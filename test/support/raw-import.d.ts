/** Vite's `?raw` import: a file's text, for tests that check a committed file as it is. */
declare module '*?raw' {
  const text: string;
  export default text;
}
