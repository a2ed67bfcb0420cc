// A boolean query parameter as upstream converts one (runtime's
// Convert_Slice_string_To_bool): only "0" and "false" (any case) are false;
// every other value, the empty one and `watch=bogus` included, is true.
// Undefined when the parameter is absent.

export function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  return !(v === "0" || v.toLowerCase() === "false");
}
