import { slug } from 'github-slugger';
import { defineConfig } from 'vitepress';
import { withMermaid } from 'vitepress-plugin-mermaid';

export default withMermaid(
  defineConfig({
    title: 'Stepwise',
    description: 'LLM agents as explicit, step-by-step state machines on AWS Step Functions.',
    markdown: { anchor: { slugify: slug } },
    themeConfig: { search: { provider: 'local' } },
  }),
);
