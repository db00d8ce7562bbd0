/**
 * The page a rate-limited page load gets (429): in the pages' own style, with no script and no
 * lookup, so it costs nothing to send however often it is asked for.
 */
export const TOO_MANY_REQUESTS_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex, nofollow"><title>Too many requests</title><link rel="stylesheet" href="/static/recipient.css"></head><body><main id="main" class="fy-main"><section class="fy-card"><h1>Too many requests</h1><p>This link was opened too often in a short time. Wait a minute, then reload the page.</p></section></main></body></html>';
