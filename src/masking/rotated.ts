// A rotated secret's old value, read off a change (pure): terraform prints a changed string as
// `"before" -> "after"`, and where the text after holds a secret, the text before holds the old
// value at the same place. `user:NEW@db` after and `user:OLD@db` before: OLD is a secret too.

export interface Place {
  start: number;
  end: number;
}

/**
 * The old values in `before` at the places of secrets in `after` (`places`: in order, none
 * overlapping). The text around the secrets must be the same before: it is the template the old
 * values are read from, each ending where the text that follows it is next found (the last one
 * where the text after it ends `before`). Where it is not the same (more of the string changed),
 * the part of `before` that differs from `after`, widened to the secrets' places, is taken
 * whole: masking too much is the safe mistake. Linear in the strings' length.
 */
export function oldValues(before: string, after: string, places: readonly Place[]): string[] {
  if (places.length === 0 || before === after) return [];
  const template = byTemplate(before, after, places);
  // With two secrets or more, an old value that holds the text between them would be cut short: the whole difference is taken too.
  return template && places.length === 1 ? template : [...(template ?? []), ...byDifference(before, after, places)];
}

function byTemplate(before: string, after: string, places: readonly Place[]): string[] | undefined {
  const between = places.map((place, index) => after.slice(place.end, places[index + 1]?.start ?? after.length));
  const head = after.slice(0, places[0]!.start);
  const tail = between.at(-1)!;
  if (!before.startsWith(head) || !before.endsWith(tail) || before.length < head.length + tail.length) return undefined;
  const found: string[] = [];
  const end = before.length - tail.length;
  let at = head.length;
  for (let index = 0; index < places.length; index++) {
    const last = index === places.length - 1;
    // Two secrets side by side: nothing says where one old value ends.
    if (!last && between[index] === '') return undefined;
    const until = last ? end : before.indexOf(between[index]!, at);
    if (until < at || until > end) return undefined;
    found.push(before.slice(at, until));
    at = until + (last ? 0 : between[index]!.length);
  }
  return found;
}

function byDifference(before: string, after: string, places: readonly Place[]): string[] {
  const shortest = Math.min(before.length, after.length);
  let prefix = 0;
  while (prefix < shortest && before[prefix] === after[prefix]) prefix++;
  let suffix = 0;
  while (suffix < shortest - prefix && before[before.length - 1 - suffix] === after[after.length - 1 - suffix])
    suffix++;
  const start = Math.min(prefix, places[0]!.start);
  const tail = Math.min(suffix, after.length - places.at(-1)!.end);
  return before.length - tail > start ? [before.slice(start, before.length - tail)] : [];
}
