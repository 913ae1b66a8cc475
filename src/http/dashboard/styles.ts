/**
 * The dashboard's one style block (the page's CSP nonce allows only it). It keeps the page
 * within a 390 px screen: the overview and the dead letters turn into cards (every column and
 * button on screen), other wide tables scroll inside their own box, long words break.
 */
export const STYLES = `
  * { box-sizing: border-box; }
  /* The hidden attribute wins over a display of flex or grid (the filters, the pager): before
     a token the page is the token form and nothing else. */
  [hidden] { display: none !important; }
  body { font: 14px/1.45 system-ui, sans-serif; margin: 1.25rem; color: #1b1f24; max-width: 90rem; }
  h1 { font-size: 1.3rem; margin: 0 0 .75rem; } h1 a { color: inherit; text-decoration: none; }
  h2 { font-size: 1.15rem; margin: 1.25rem 0 .5rem; } h3 { font-size: 1rem; margin: 1.5rem 0 .5rem; }
  a { color: #0b57d0; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e3e6ea; vertical-align: top; }
  td { overflow-wrap: break-word; } th { white-space: nowrap; }
  .scroll { overflow-x: auto; max-width: 100%; }
  .scroll table { min-width: 44rem; }
  .nowrap { white-space: nowrap; } .num { text-align: right; }
  .muted { color: #6a737d; }
  .error { color: #b42318; font-size: .9rem; overflow-wrap: break-word; }
  .warn { color: #8a5a00; overflow-wrap: break-word; }
  .state { padding: .1rem .45rem; border-radius: .6rem; background: #eef1f4; font-size: .85rem; white-space: nowrap; }
  .state.ok { background: #dcf5e3; } .state.running { background: #dde9ff; }
  .state.lagging, .state.failing, .state.silent { background: #fde9c8; }
  .state.warning { background: #fff4bf; } .state.misconfigured { background: #fbd5d2; }
  .state.paused { background: #e9e4f5; }
  .outcome.failed, .outcome.recovered, .outcome.fenced { color: #b42318; font-weight: 600; }
  .outcome.skipped { color: #6a737d; }
  tr.notes td { border-bottom: 1px solid #e3e6ea; padding-top: 0; }
  tr.run:has(+ tr.run-error) td { border-bottom: 0; } tr.run-error td { padding-top: 0; }
  .error-text { overflow-wrap: anywhere; }
  details.error-text summary { cursor: pointer; list-style: none; }
  details.error-text summary::-webkit-details-marker { display: none; }
  details.error-text .more, details.error-text .less { color: #0b57d0; text-decoration: underline; white-space: nowrap; }
  details.error-text[open] .cut, details.error-text[open] .more, details.error-text:not([open]) .less { display: none; }
  details.error-text p.full { margin: 0; white-space: pre-wrap; }
  .access { margin: 0 0 .5rem; font-size: .85rem; } .access.admin { color: #116329; } .access.read { color: #8a5a00; }
  .actions { white-space: nowrap; } .actions button { margin: 0 .25rem .25rem 0; }
  ul.why { padding-left: 1.1rem; margin: .25rem 0 .75rem; }
  dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0; }
  dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
  #panel.stale { opacity: .55; }
  pre { overflow-x: auto; max-width: 100%; background: #f6f8fa; padding: .6rem; font-size: .8rem; }
  pre.config { white-space: pre-wrap; overflow-wrap: anywhere; }
  details pre { max-height: 16rem; }
  figure { margin: 1rem 0; max-width: 640px; } figcaption { font-weight: 600; }
  .chart { display: block; width: 100%; height: auto; }
  .chart .grid line { stroke: #eef1f4; }
  .chart .axis line { stroke: #8c959f; }
  .chart .bar { fill: #b6d0f7; }
  .chart .lag { fill: none; stroke: #d9480f; stroke-width: 2; }
  .chart .lag-point { fill: #d9480f; }
  .chart .failed line { stroke: #b42318; stroke-dasharray: 2 3; }
  .chart .failed path { stroke: #b42318; stroke-width: 2.5; fill: none; }
  .chart .threshold line { stroke: #7c3aed; stroke-dasharray: 6 4; stroke-width: 1.5; }
  .chart .threshold text { fill: #7c3aed; }
  .chart text { font-size: 11px; fill: #57606a; }
  .chart .axis-title { font-size: 12px; fill: #1b1f24; }
  .legend { list-style: none; padding: 0; margin: .25rem 0 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; font-size: .8rem; color: #57606a; }
  .swatch { display: inline-block; width: 1rem; height: .6rem; margin-right: .3rem; vertical-align: middle; }
  .swatch.lag { background: #d9480f; height: 2px; } .swatch.bar { background: #b6d0f7; }
  .swatch.failed { background: #b42318; width: .6rem; } .swatch.threshold { border-top: 2px dashed #7c3aed; height: 0; }
  button { cursor: pointer; }
  .kind { font-size: .75rem; padding: 0 .35rem; border: 1px solid #d0d7de; border-radius: .5rem; color: #57606a; }
  .kind.runtime { border-color: #9ec5fe; color: #0b57d0; }
  .labels { display: block; }
  a.label { display: inline-block; max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
    vertical-align: bottom; font-size: .75rem; padding: 0 .35rem; margin: .15rem .2rem 0 0;
    background: #f1f3f5; border-radius: .3rem; color: #1b1f24; text-decoration: none; }
  table.pollers td:first-child { min-width: 11rem; }
  a.label:hover { background: #dde9ff; }
  .filters { display: flex; flex-wrap: wrap; gap: .5rem; margin: .5rem 0; }
  .filters input { flex: 1 1 10rem; min-width: 0; max-width: 18rem; }
  .pager { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; margin: .5rem 0; }
  .fleet-summary { margin: .25rem 0 .5rem; } .fleet-summary a { text-decoration: none; color: inherit; }
  #login { display: flex; flex-wrap: wrap; gap: .5rem; margin-bottom: .75rem; }
  #login input { flex: 1 1 14rem; min-width: 0; max-width: 24rem; }
  .banner { background: #fbd5d2; color: #7a1b12; padding: .5rem .75rem; border-radius: .4rem; margin: .5rem 0; }
  .notice { margin: .5rem 0; min-height: 1.2em; } .notice.ok { color: #116329; } .notice.error { color: #b42318; }
  .notice.warn { color: #8a5a00; }
  .held, .reconnect { background: #fbd5d2; color: #7a1b12; border-left: 4px solid #b42318; padding: .5rem .75rem;
    border-radius: .4rem; margin: .5rem 0 .75rem; overflow-wrap: break-word; }
  .held p, .reconnect p { margin: 0 0 .5rem; }
  .reconnect ol { margin: 0; padding-left: 1.2rem; } .reconnect code { overflow-wrap: anywhere; }
  dialog { max-width: min(32rem, 92vw); border: 1px solid #8c959f; border-radius: .5rem; }
  dialog input { width: 100%; margin: .5rem 0; }
  dialog .buttons { display: flex; justify-content: flex-end; gap: .5rem; }
  /* Up to 760 px (where the 44rem tables would scroll sideways) the overview and the dead
     letters are cards: one per poller or letter, each cell under its column's name, the ones
     an on-call engineer looks for first (state, lag, dead letters) side by side near the top,
     the buttons under the row. Nothing is out of sight in a sideways scroll. */
  @media (max-width: 760px) {
    table.pollers, table.dead-letters, table.pollers tbody, table.dead-letters tbody { display: block; }
    .scroll table.pollers, .scroll table.dead-letters { min-width: 0; }
    table.pollers thead, table.dead-letters thead { display: none; }
    table.pollers tr, table.dead-letters tr { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr));
      column-gap: .75rem; padding: .45rem 0; border-top: 1px solid #d0d7de; }
    table.pollers tr.notes { border-top: 0; padding-top: 0; }
    table.pollers td, table.dead-letters td { display: block; grid-column: 1 / -1; order: 5; min-width: 0;
      padding: .15rem 0; border: 0; white-space: normal; text-align: left; }
    table.pollers td[data-label]::before, table.dead-letters td[data-label]::before {
      content: attr(data-label); display: block; font-size: .75rem; font-weight: 600; color: #57606a; }
    table.pollers td.name, table.dead-letters td.id { order: 0; min-width: 0; }
    table.pollers td.current { order: 1; grid-column: auto; }
    table.pollers td.lag { order: 2; grid-column: auto; }
    table.pollers td.dead { order: 3; grid-column: auto; }
    table.pollers td.mark { order: 4; grid-column: auto; }
    table.dead-letters td.error { order: 1; }
    table.dead-letters td[data-label]:not(.error) { grid-column: auto; }
    table.pollers td.actions, table.dead-letters td.actions { order: 9; padding-top: .35rem; }
    /* The run history too: a card per run, its error under it across the card. */
    table.runs, table.runs tbody { display: block; }
    .scroll table.runs { min-width: 0; }
    table.runs thead { display: none; }
    table.runs tr.run { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); column-gap: .75rem;
      padding: .45rem 0 .2rem; border-top: 1px solid #d0d7de; }
    table.runs tr.run-error { display: block; }
    table.runs td { display: block; min-width: 0; padding: .1rem 0; border: 0; white-space: normal; text-align: left; }
    table.runs td[data-label]::before { content: attr(data-label); display: block; font-size: .75rem;
      font-weight: 600; color: #57606a; }
  }
  @media (max-width: 600px) {
    body { margin: .6rem; font-size: 13px; }
    dl.facts { grid-template-columns: 1fr; } dl.facts dd { margin-bottom: .4rem; }
    /* The chart is drawn 640 units wide: larger type stays readable once it is scaled down. */
    .chart text { font-size: 17px; } .chart .axis-title { font-size: 18px; }
  }
`;
