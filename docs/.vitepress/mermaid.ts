/**
 * `mermaid` as vitepress-plugin-mermaid uses it (initialize, render, registerExternalDiagrams), backed by Mermaid's
 * own prebuilt ESM, which the site serves as it is under /mermaid/ (config.ts copies it there) and a page loads on its
 * first diagram. Rollup never sees Mermaid's 3.6 MB: bundling it was half of the docs build's time.
 */
import type { ExternalDiagramDefinition, Mermaid, MermaidConfig } from 'mermaid';

let loaded: Promise<Mermaid> | undefined;
let config: MermaidConfig = {};

const load = (): Promise<Mermaid> =>
  (loaded ??= import(/* @vite-ignore */ `${import.meta.env.BASE_URL}mermaid/mermaid.esm.min.mjs`).then(
    (m: { default: Mermaid }) => m.default,
  ));

export default {
  initialize(next: MermaidConfig): void {
    config = next;
  },
  async registerExternalDiagrams(diagrams: ExternalDiagramDefinition[]): Promise<void> {
    await (await load()).registerExternalDiagrams(diagrams);
  },
  async render(id: string, code: string): Promise<{ svg: string }> {
    const mermaid = await load();
    mermaid.initialize(config);
    return mermaid.render(id, code);
  },
};
