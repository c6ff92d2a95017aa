/**
 * HTML shapes that were quadratic somewhere: our old regex converter, htmlparser2's Parser (an unshift per open tag),
 * html-to-text (nesting), postal-mime's own converter (`<a href=` without `>`).
 */
export const HOSTILE_HTML: Array<[string, string]> = [
  ['"<" repeated', '<'],
  ['nested inline tags', '<b>x'],
  ['nested blocks', '<div>'],
  ['unclosed comments', '<!--'],
  ['unclosed scripts', '<script'],
  ['unterminated links', '<a href='],
  ['entities', '&#'],
];
