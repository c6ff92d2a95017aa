/**
 * `npm run build:studio`: bundle Studio's UI into `src/cli/studio/dist/` (studio.js, studio.css),
 * the folder a package includes; Studio serves it instead of bundling the sources at start.
 */
import { relative } from 'node:path';
import { DIST_DIR, writeUiBundle } from '../src/cli/studio/assets.ts';

const files = await writeUiBundle();
process.stdout.write(
  `Studio UI bundled: ${files.map((f) => relative(process.cwd(), `${DIST_DIR}/${f}`)).join(', ')}\n`,
);
