/** Emoji shortcodes Slack would show as pictures: the bot's own, and common ones. */
const EMOJI = {
  alarm_clock: '⏰', bell: '🔔', electric_plug: '🔌', fast_forward: '⏩', grey_question: '❔',
  heavy_minus_sign: '➖', heavy_plus_sign: '➕', hourglass_flowing_sand: '⏳', hourglass: '⌛',
  lock: '🔒', unlock: '🔓', pencil2: '✏️', robot_face: '🤖', speech_balloon: '💬', ticket: '🎫',
  warning: '⚠️', white_check_mark: '✅', x: '❌', heavy_check_mark: '✔️', no_entry: '⛔',
  no_entry_sign: '🚫', rocket: '🚀', fire: '🔥', tada: '🎉', eyes: '👀', thumbsup: '👍', '+1': '👍',
  thumbsdown: '👎', '-1': '👎', wave: '👋', smile: '😄', slightly_smiling_face: '🙂', thinking_face: '🤔',
  information_source: 'ℹ️', bulb: '💡', gear: '⚙️', wrench: '🔧', hammer_and_wrench: '🛠️', key: '🔑',
  clock1: '🕐', calendar: '📆', memo: '📝', page_facing_up: '📄', link: '🔗', mag: '🔍', package: '📦',
  red_circle: '🔴', large_green_circle: '🟢', large_yellow_circle: '🟡', large_blue_circle: '🔵',
  white_circle: '⚪', black_circle: '⚫', star: '⭐', sparkles: '✨', zap: '⚡', boom: '💥', stop_sign: '🛑',
  arrows_counterclockwise: '🔄', repeat: '🔁', arrow_right: '➡️', arrow_left: '⬅️', point_right: '👉',
  question: '❓', exclamation: '❗', heart: '❤️', ok_hand: '👌', pray: '🙏', raised_hands: '🙌', clap: '👏',
  shield: '🛡️', bust_in_silhouette: '👤', busts_in_silhouette: '👥', hourglass_done: '⌛', stopwatch: '⏱️',
};

/** The emoji for a shortcode name (`lock`, not `:lock:`), or undefined. */
export function emojiFor(name) {
  return Object.hasOwn(EMOJI, name) ? EMOJI[name] : undefined;
}

/** Slack's `unicode` field of a rich-text emoji: code points in hex joined by `-`. */
export function emojiFromCodePoints(unicode) {
  if (typeof unicode !== 'string' || !/^[0-9a-f]{1,6}(-[0-9a-f]{1,6})*$/i.test(unicode)) return undefined;
  try {
    return String.fromCodePoint(...unicode.split('-').map((hex) => parseInt(hex, 16)));
  } catch {
    return undefined;
  }
}
