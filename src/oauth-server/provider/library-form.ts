/**
 * The two values of a form the protocol library renders (`<form … action="…"><input …
 * name="xsrf" value="…"/></form>`: RP-initiated logout, the device flow's steps), to be rendered
 * into Keygate's own page, where they are escaped again.
 */
export function libraryFormValues(form: string): { action: string; xsrf: string } {
  return {
    action: unescapeHtml(/action="([^"]+)"/.exec(form)?.[1] ?? ''),
    xsrf: unescapeHtml(/name="xsrf" value="([^"]+)"/.exec(form)?.[1] ?? ''),
  };
}

/** The library escapes attribute values. */
function unescapeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
