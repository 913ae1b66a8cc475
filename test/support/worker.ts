// The app and the handler registry as the Worker serves them: its entry (src/index.ts)
// composes the built-in demo into them (the /demo routes, the demo-sessions handler). A test
// that reaches the demo through them imports them from here, so that the entry has run first.
import '../../src/index.ts';

export { handlers } from '../../src/handlers/index.ts';
export { app } from '../../src/http/app.ts';
