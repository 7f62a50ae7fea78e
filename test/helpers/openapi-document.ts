// Reading an OpenAPI document by JSON pointer: the tests that check answers and examples against it.
export type Json = Record<string, any>;

export const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export function documentReader(doc: Json) {
  function atPointer(pointer: string): unknown {
    let node: unknown = doc;
    for (const raw of pointer.replace(/^#?\//, '').split('/')) {
      if (node === null || typeof node !== 'object') return undefined;
      node = (node as Json)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return node;
  }

  /** Follows `$ref`s within the document; answers the object and the pointer it lives at. */
  function deref(value: Json, pointer: string): { value: Json; pointer: string } {
    let current = { value, pointer };
    while (typeof current.value.$ref === 'string') {
      const target = current.value.$ref.slice(1);
      current = { value: atPointer(target) as Json, pointer: target };
      if (!current.value) throw new Error(`unresolved $ref ${target}`);
    }
    return current;
  }

  return { atPointer, deref };
}
