/**
 * Slack's `<!date^seconds^format|fallback>` tokens and message times, in the reader's own time zone
 * (or `ctx.timeZone`, which tests set).
 */

const DAY_MS = 86_400_000;

function parts(date, timeZone, options) {
  return new Intl.DateTimeFormat('en-US', { timeZone, ...options }).format(date);
}

function ordinal(day) {
  const suffix = day % 10 === 1 && day !== 11 ? 'st' : day % 10 === 2 && day !== 12 ? 'nd' : day % 10 === 3 && day !== 13 ? 'rd' : 'th';
  return `${day}${suffix}`;
}

function calendarDay(date, timeZone) {
  return parts(date, timeZone, { year: 'numeric', month: '2-digit', day: '2-digit' });
}

/** "today" / "yesterday" / "tomorrow" when the date is one of them. */
function prettyDay(date, { timeZone, now }) {
  const today = new Date(now);
  for (const [offset, word] of [[0, 'today'], [-1, 'yesterday'], [1, 'tomorrow']]) {
    if (calendarDay(date, timeZone) === calendarDay(new Date(today.getTime() + offset * DAY_MS), timeZone)) return word;
  }
  return undefined;
}

function dateText(date, timeZone, style) {
  const day = Number(parts(date, timeZone, { day: 'numeric' }));
  switch (style) {
    case 'num': {
      const [month, dayOfMonth, year] = calendarDay(date, timeZone).split('/');
      return `${year}-${month}-${dayOfMonth}`;
    }
    case 'short':
      return parts(date, timeZone, { month: 'short', day: 'numeric', year: 'numeric' });
    case 'long':
      return `${parts(date, timeZone, { weekday: 'long' })}, ${parts(date, timeZone, { month: 'long' })} ${ordinal(day)}, ${parts(date, timeZone, { year: 'numeric' })}`;
    default:
      return `${parts(date, timeZone, { month: 'long' })} ${ordinal(day)}, ${parts(date, timeZone, { year: 'numeric' })}`;
  }
}

function agoText(date, now) {
  const seconds = Math.round((now - date.getTime()) / 1000);
  const future = seconds < 0;
  const size = Math.abs(seconds);
  const [amount, unit] =
    size < 60 ? [size, 'second'] : size < 3600 ? [Math.floor(size / 60), 'minute'] : size < 86_400 ? [Math.floor(size / 3600), 'hour'] : [Math.floor(size / 86_400), 'day'];
  const phrase = `${amount} ${unit}${amount === 1 ? '' : 's'}`;
  return future ? `in ${phrase}` : `${phrase} ago`;
}

/** Fills Slack's date tokens; the text around them is returned as it is (the caller escapes it). */
export function formatSlackDate(seconds, format, ctx = {}) {
  const date = new Date(seconds * 1000);
  if (!Number.isFinite(date.getTime())) return undefined;
  const timeZone = ctx.timeZone;
  const now = ctx.now ? ctx.now() : Date.now();
  const tokens = {
    date_num: () => dateText(date, timeZone, 'num'),
    date: () => dateText(date, timeZone, 'plain'),
    date_short: () => dateText(date, timeZone, 'short'),
    date_long: () => dateText(date, timeZone, 'long'),
    date_pretty: () => prettyDay(date, { timeZone, now }) ?? dateText(date, timeZone, 'plain'),
    date_short_pretty: () => prettyDay(date, { timeZone, now }) ?? dateText(date, timeZone, 'short'),
    date_long_pretty: () => prettyDay(date, { timeZone, now }) ?? dateText(date, timeZone, 'long'),
    time: () => parts(date, timeZone, { hour: 'numeric', minute: '2-digit' }),
    time_secs: () => parts(date, timeZone, { hour: 'numeric', minute: '2-digit', second: '2-digit' }),
    ago: () => agoText(date, now),
  };
  return String(format).replace(/\{(\w+)\}/g, (whole, name) => (Object.hasOwn(tokens, name) ? tokens[name]() : whole));
}

/** The time a message was posted, from its `ts` ("1736954412.004219"). */
export function messageTime(ts, ctx = {}) {
  const seconds = Number.parseFloat(ts);
  if (!Number.isFinite(seconds)) return '';
  return parts(new Date(seconds * 1000), ctx.timeZone, { hour: 'numeric', minute: '2-digit' });
}

const pad = (number) => String(number).padStart(2, '0');

/** Epoch seconds as a `datetime-local` value in the reader's time zone (seconds only when not :00). */
export function secondsToLocalInput(seconds) {
  const date = new Date(seconds * 1000);
  if (!Number.isFinite(date.getTime())) return '';
  const base = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return date.getSeconds() === 0 ? base : `${base}:${pad(date.getSeconds())}`;
}

/** A `datetime-local` value back to epoch seconds, as Slack's `selected_date_time`. */
export function localInputToSeconds(value) {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(value);
  if (!match) return null;
  const [, year, month, day, hours, minutes, seconds = '0'] = match;
  const date = new Date(Number(year), Number(month) - 1, Number(day), Number(hours), Number(minutes), Number(seconds));
  return Math.floor(date.getTime() / 1000);
}
