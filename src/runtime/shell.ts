/** Quotes one word for a POSIX shell, so a command survives being written to a script. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** `export NAME='value'` lines for a sourced env file. */
export function exportLines(env: Readonly<Record<string, string>>): string {
  return Object.entries(env)
    .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
    .join('');
}
