// The shape every generated vectors file of contract/vectors/ has: what it is, how to regenerate it,
// and the vectors, as JSON with a final newline.
export const vectorsFile = (description: string, script: string, vectors: readonly unknown[]): string =>
  `${JSON.stringify({ description, generatedBy: `node --import tsx ${script} (do not edit by hand)`, vectors }, null, 2)}\n`;
