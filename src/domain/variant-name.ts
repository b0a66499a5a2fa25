/**
 * The one name rule of variants, segments and environments: 1–64 of `A-Z a-z 0-9 . _ -`. A module
 * of its own so the web UI's code can use it without the rule checks beside it.
 */
export const VARIANT_NAME = /^[A-Za-z0-9._-]{1,64}$/
