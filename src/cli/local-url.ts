/** Where `npm start` serves the Worker unless PORT says otherwise (scripts/start.ts). */
export const LOCAL_HOST = '127.0.0.1';
/** `npm start`'s default port. */
export const LOCAL_PORT = 8787;
/** The address `npm start` serves on by default: what TIDEMARK_URL is for a local Worker. */
export const LOCAL_URL = `http://${LOCAL_HOST}:${LOCAL_PORT}`;
