/**
 * A flag's fields as the review dialog, a request's page and a request's title name them
 * (docs/ui.md#review-before-protected-changes): in words where the API's name is a compound
 * ("default value", not `defaultValue`); the names people already read as words stay as they are.
 */

const WORDS: Readonly<Record<string, string>> = {
  defaultValue: 'default value',
  enumValues: 'allowed values',
  regexPattern: 'pattern',
  minValue: 'minimum',
  maxValue: 'maximum',
  minCount: 'fewest values',
  maxCount: 'most values',
  chancePercentB: 'share of B',
  valueExists: 'value set',
  jsonSchema: 'JSON schema',
}

/** The name of `field` in words ("allowed values" for `enumValues`); any other field as it is. */
export const fieldWord = (field: string): string => (Object.hasOwn(WORDS, field) ? (WORDS[field] as string) : field)
