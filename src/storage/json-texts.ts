/**
 * The JSON text of stored values, made once per commit (docs/performance.md#imports): a row's text
 * is written to the change journal and, at the next checkpoint, to the state file; an audit entry's
 * text goes to both journals. Rows and entries are frozen, so a text made once stays true. Texts are
 * kept by the value they are of, and only until the checkpoint that covers them: `roll` starts a
 * new generation, so what is held is at most what the change journal holds, never a second copy of
 * the whole state (docs/performance.md#memory). The PostgreSQL store uses one per batch, for a row's
 * body and its change feed entry.
 */

/** Texts of the values serialised since the last checkpoint (see module comment). */
export class JsonTexts {
  private generation = new WeakMap<object, string>()

  /** `JSON.stringify(value)`, made once per generation. */
  of(value: object): string {
    let text = this.generation.get(value)
    if (text === undefined) {
      text = JSON.stringify(value)
      this.generation.set(value, text)
    }
    return text
  }

  /** The text made of `value` in this generation, if any. */
  known(value: object): string | undefined {
    return this.generation.get(value)
  }

  /** Starts a new generation and answers the last one's texts (a checkpoint writes them, then lets them go). */
  roll(): Pick<JsonTexts, 'known'> {
    const last = this.generation
    this.generation = new WeakMap()
    return { known: (value) => last.get(value) }
  }
}
