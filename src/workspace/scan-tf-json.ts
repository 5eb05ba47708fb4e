// The JSON syntax of a module (.tf.json): the same facts as the HCL scanner, from an object.
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import { ADDRESS_BLOCKS, addAddressAttribute, addResource, addVariable, emptyScan, type ModuleScan } from './scan.ts';
import { nonsensitiveCallLines } from './scan-hcl.ts';

/** The JSON syntax (.tf.json): the same facts from an object. Every occurrence of a duplicate key counts, as terraform reads each as a block. */
export function scanJson(text: string, into: ModuleScan = emptyScan(), file = ''): ModuleScan {
  const doc = parseJsonWithLines(text);
  if (!('members' in doc))
    throw new Error(`the top level is ${'items' in doc ? 'an array' : 'not an object'}, expected a JSON object`);
  for (const line of nonsensitiveCalls(doc)) into.nonsensitive.push({ file, line });
  for (const [blockType, value] of doc.members) {
    const blocks = objects(value);
    if (blockType === 'resource') {
      for (const [type, named] of blocks.flatMap(members))
        for (const [name, body] of objects(named).flatMap(members)) addResource(into, file, body.line, type, name);
    } else if (blockType === 'module') {
      for (const [name] of blocks.flatMap(members)) into.moduleCalls.push(`module.${name}`);
    } else if (blockType === 'variable') {
      for (const [name, body] of blocks.flatMap(members)) {
        const says = (argument: string) =>
          objects(body)
            .flatMap(members)
            .some(([key, v]) => key === argument && 'scalar' in v && v.scalar === true);
        addVariable(into, file, body.line, name, { sensitive: says('sensitive'), ephemeral: says('ephemeral') });
      }
    } else if (blockType === 'terraform') {
      for (const [key, v] of blocks.flatMap(members)) {
        if (key === 'backend')
          for (const [backend, block] of objects(v).flatMap(members)) {
            into.backend ??= backend;
            const path =
              backend === 'local'
                ? objects(block)
                    .flatMap(members)
                    .find(([key]) => key === 'path')?.[1]
                : undefined;
            into.backendBlocks.push({
              file,
              line: block.line,
              type: backend,
              ...(path && 'scalar' in path && typeof path.scalar === 'string' && { path: path.scalar }),
            });
          }
        if (key === 'cloud') {
          into.backend ??= 'cloud';
          into.backendBlocks.push({ file, line: v.line, type: 'cloud' });
        }
        if (key === 'encryption') into.encryption.push({ file, line: v.line });
      }
    } else if (ADDRESS_BLOCKS.has(blockType)) {
      for (const [attribute, v] of blocks.flatMap(members)) {
        if ('scalar' in v && typeof v.scalar === 'string')
          addAddressAttribute(into, file, v.line, blockType, attribute, v.scalar);
      }
    }
  }
  return into;
}

/**
 * The lines of the nonsensitive() calls in the templates of a document's strings (`"${nonsensitive(var.x)}"`),
 * one per call, at the string's line. Not in a `"//"` comment property, nor in what the JSON syntax reads
 * as literal values: a variable's `default` and `description`. Block labels are keys, never templates.
 */
function nonsensitiveCalls(doc: JsonNode): number[] {
  const lines: number[] = [];
  const walk = (node: JsonNode, literal: ReadonlySet<string>): void => {
    if ('scalar' in node) {
      if (typeof node.scalar === 'string')
        for (const _ of nonsensitiveCallLines(node.scalar, 'template')) lines.push(node.line);
    } else if ('items' in node) for (const item of node.items) walk(item, literal);
    else for (const [key, value] of node.members) if (key !== '//' && !literal.has(key)) walk(value, NOTHING_LITERAL);
  };
  for (const [blockType, value] of members(doc)) {
    if (blockType === '//') continue;
    if (blockType !== 'variable') walk(value, NOTHING_LITERAL);
    else
      for (const [, body] of objects(value).flatMap(members)) for (const v of objects(body)) walk(v, VARIABLE_LITERALS);
  }
  return lines;
}
const NOTHING_LITERAL: ReadonlySet<string> = new Set();
/** The arguments of a variable block that the JSON syntax reads as literal values, not templates. */
const VARIABLE_LITERALS: ReadonlySet<string> = new Set(['default', 'description']);

/** A JSON value and the line it starts on. Objects keep every member in order, duplicate keys included. */
type JsonNode = { line: number } & ({ members: [string, JsonNode][] } | { items: JsonNode[] } | { scalar: unknown });

/**
 * The JSON syntax lets a block be an object or an array of them at each level, and terraform also
 * takes an array of arrays for unlabelled blocks (`"moved": [[{…}]]`): every depth is read.
 */
const objects = (node: JsonNode): JsonNode[] =>
  'items' in node ? node.items.flatMap(objects) : 'members' in node ? [node] : [];
const members = (node: JsonNode): [string, JsonNode][] => ('members' in node ? node.members : []);

/**
 * JSON.parse keeps only the last of duplicate keys (terraform reads every one as a block) and knows
 * no lines: jsonc-parser's syntax tree keeps both. Comments and trailing commas are refused, as terraform does.
 */
function parseJsonWithLines(text: string): JsonNode {
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const lineAt = (offset: number) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (lineStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  };
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (first || !tree)
    throw new Error(
      `invalid JSON on line ${lineAt(first?.offset ?? 0)}: ${first ? printParseErrorCode(first.error) : 'no value'}`,
    );
  const convert = (node: Node): JsonNode => {
    const line = lineAt(node.offset);
    if (node.type === 'object')
      return {
        line,
        members: (node.children ?? []).map((property) => [
          property.children![0]!.value as string,
          convert(property.children![1]!),
        ]),
      };
    if (node.type === 'array') return { line, items: (node.children ?? []).map(convert) };
    return { line, scalar: node.value };
  };
  return convert(tree);
}
