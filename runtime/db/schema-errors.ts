/**
 * The errors of a database that lacks part of xmlrest's schema: a table `xmlrest db init` has not made, a column
 * an earlier version's table lacks until `xmlrest db init` adds it, or a procedure it has not made yet. None is a fault (faults.ts): each
 * caller decides whether it means "nothing of that kind here" (fall back) or "run xmlrest db init" (say so).
 */
export const NO_TABLE = 1146; // ER_NO_SUCH_TABLE (MariaDB and MySQL)
export const NO_COLUMN = 1054; // ER_BAD_FIELD_ERROR (MariaDB and MySQL)
export const NO_PROCEDURE = 1305; // ER_SP_DOES_NOT_EXIST (MariaDB and MySQL)

/** The driver's error number of an error, when it has one. */
export function errnoOf(error: unknown): number | undefined {
  const errno = (error as { errno?: unknown } | null | undefined)?.errno;
  return typeof errno === 'number' ? errno : undefined;
}
