import { cpSync, createReadStream, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { slug } from 'github-slugger';
import { defineConfig } from 'vitepress';
import { withMermaid } from 'vitepress-plugin-mermaid';

/** Mermaid's prebuilt ESM (mermaid.esm.min.mjs and its chunks), served as it is under /mermaid/ (see mermaid.ts). */
const MERMAID_DIST = join(dirname(createRequire(import.meta.url).resolve('mermaid/package.json')), 'dist');

const pages = (dir: string, items: [string, string][]) =>
  items.map(([text, page]) => ({ text, link: `/${dir}/${page}` }));

/**
 * The docs site: the markdown of docs/, built offline with `npm run docs:build`. Headings get
 * GitHub's anchors, so a link works the same on GitHub and on the site (test/docs/links.test.ts
 * checks them); the build fails on a link to a missing page.
 */
export default withMermaid(
  defineConfig({
    title: 'Stepwise',
    description: 'LLM agents as explicit, step-by-step state machines on AWS Step Functions.',
    srcExclude: ['schemas/**'],
    // Option help names local endpoints (Ollama's http://localhost:11434/v1); those are not pages.
    ignoreDeadLinks: 'localhostLinks',
    // Mermaid loads only on pages with a diagram, unbundled (mermaid.ts).
    vite: {
      resolve: { alias: [{ find: /^mermaid$/, replacement: join(import.meta.dirname, 'mermaid.ts') }] },
      // `npm run docs:dev` serves /mermaid/ from the package; the build copies it (buildEnd).
      plugins: [
        {
          name: 'stepwise-mermaid-dist',
          configureServer(server) {
            server.middlewares.use('/mermaid/', (req, res, next) => {
              const file = normalize(join(MERMAID_DIST, (req.url ?? '').split('?')[0]!));
              if (!file.startsWith(MERMAID_DIST) || !file.endsWith('.mjs') || !existsSync(file)) return next();
              res.setHeader('Content-Type', 'text/javascript');
              createReadStream(file).pipe(res);
            });
          },
        },
      ],
    },
    markdown: {
      anchor: { slugify: slug },
      // Templates in the text (`{{found.serial}}`) are documentation, not Vue interpolations.
      config: (md) => {
        const code = md.renderer.rules.code_inline!;
        md.renderer.rules.code_inline = (...args) => code(...args).replace('<code', '<code v-pre');
        const text = md.renderer.rules.text!;
        md.renderer.rules.text = (...args) => text(...args).replaceAll('{{', '&#123;&#123;');
      },
    },
    // The JSON Schemas are served beside the pages that link them; Mermaid's prebuilt ESM under /mermaid/.
    buildEnd: ({ outDir }) => {
      cpSync(join(import.meta.dirname, '..', 'schemas'), join(outDir, 'schemas'), { recursive: true });
      cpSync(join(MERMAID_DIST, 'mermaid.esm.min.mjs'), join(outDir, 'mermaid', 'mermaid.esm.min.mjs'));
      cpSync(join(MERMAID_DIST, 'chunks', 'mermaid.esm.min'), join(outDir, 'mermaid', 'chunks', 'mermaid.esm.min'), {
        recursive: true,
        filter: (path) => !path.endsWith('.map'),
      });
    },
    themeConfig: {
      search: { provider: 'local' },
      nav: [
        { text: 'Getting started', link: '/getting-started' },
        { text: 'Reference', link: '/reference/cli' },
        { text: 'Examples', link: '/examples/warranty-email' },
      ],
      sidebar: [
        {
          text: 'Getting started',
          items: [
            { text: 'Install and demo', link: '/getting-started' },
            { text: 'Your first workflow', link: '/guides/first-workflow' },
          ],
        },
        {
          text: 'Concepts',
          items: pages('concepts', [
            ['How it fits together', 'overview'],
            ['Steps', 'steps'],
            ['Routing', 'routing'],
            ['Fallback and retries', 'fallback'],
            ['Circuit breaker and counters', 'circuit-breaker'],
            ['Consensus', 'consensus'],
            ['Pauses', 'pauses'],
            ['Lifecycles', 'lifecycles'],
            ['Inputs and triggers', 'triggers'],
            ['Output guards', 'guards'],
            ['Safety by construction', 'safety'],
          ]),
        },
        {
          text: 'Guides',
          items: pages('guides', [
            ['Your own project', 'project'],
            ['Tools', 'tools'],
            ['MCP tools', 'mcp-tools'],
            ['Code steps', 'code-steps'],
            ['Workflow constructs', 'workflow-constructs'],
            ['Evals', 'evals'],
            ['The email trigger', 'email-trigger'],
            ['Deploying per environment', 'deploying'],
            ['Operating', 'operating'],
            ['Debugging', 'debugging'],
            ['Observability', 'observability'],
            ['Studio', 'studio'],
            ['Real models', 'real-models'],
          ]),
        },
        {
          text: 'Reference',
          items: pages('reference', [
            ['CLI', 'cli'],
            ['workflow.yaml', 'workflow'],
            ['Step frontmatter', 'step'],
            ['Offline-model rules', 'offline-model'],
            ['Eval cases', 'eval-case'],
            ['Guard rules', 'guard-rules'],
            ['statechart.yaml', 'statechart'],
            ['Agent config', 'agent-config'],
            ['Models', 'models'],
          ]),
        },
        {
          text: 'Examples',
          items: pages('examples', [
            ['Warranty email', 'warranty-email'],
            ['Tool loop', 'tool-loop'],
            ['Investigation', 'investigation'],
            ['Turn pipeline', 'turn-pipeline'],
            ['Order support', 'order-support'],
            ['Order ticket', 'order-ticket'],
            ['Lead lifecycle', 'lead-lifecycle'],
          ]),
        },
        {
          text: 'Internals',
          items: [
            ...pages('internals', [
              ['Architecture', 'architecture'],
              ['Local-runtime fidelity', 'local-runtime'],
              ['Compilation', 'compilation'],
              ['Benchmarks', 'benchmarks'],
              ['Lambda bundles', 'bundles'],
              ['Tests and reliability', 'testing'],
            ]),
            { text: 'Guarantees', link: '/guarantees' },
          ],
        },
      ],
    },
  }),
);
