/** Entry point of the sandbox page (index.html loads it as /static/main.js). */
import { startApp } from './app.js';

let storage;
try {
  storage = window.localStorage;
} catch {
  storage = undefined;
}

startApp({
  root: document.getElementById('app'),
  fetch: window.fetch.bind(window),
  EventSource: window.EventSource,
  storage,
  location: window.location,
  open: (url, target, features) => window.open(url, target, features),
});
