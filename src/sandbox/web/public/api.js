/** The page's side of src/sandbox/sandbox-api.ts: JSON requests and the snapshot stream. */

export function createApi(fetchFn) {
  async function post(path, body) {
    const response = await fetchFn(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    let answer;
    try {
      answer = await response.json();
    } catch {
      answer = undefined;
    }
    if (!response.ok || answer?.ok === false) throw new Error(answer?.error ?? `HTTP ${response.status}`);
    return answer;
  }
  return {
    async state() {
      const response = await fetchFn('/api/state');
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return response.json();
    },
    postMessage: (request) => post('/api/messages', request),
    action: (request) => post('/api/actions', request),
    submitView: (request) => post('/api/views/submit', request),
    closeView: (request) => post('/api/views/close', request),
    command: (request) => post('/api/commands', request),
  };
}

/** `snapshot` events from `/api/events`; `onConnection(true|false)` as the stream opens or drops. */
export function subscribe(EventSourceClass, onSnapshot, onConnection = () => {}) {
  const source = new EventSourceClass('/api/events');
  source.addEventListener('snapshot', (event) => {
    let snapshot;
    try {
      snapshot = JSON.parse(event.data);
    } catch {
      return;
    }
    onSnapshot(snapshot);
  });
  source.addEventListener('open', () => onConnection(true));
  source.addEventListener('error', () => onConnection(false));
  return () => source.close();
}
