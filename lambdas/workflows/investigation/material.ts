import type { ToolContext } from 'stepwise';
import { ToolInputError } from 'stepwise';
import { InvestigationInput } from './rules.ts';

/** The files of the material the execution was started with (untrusted: logs, code, configs as given). */
export function materialOf(ctx: ToolContext): { path: string; content: string }[] {
  return InvestigationInput.shape.material.parse((ctx.input as { material?: unknown }).material);
}

/** One file of the material. @throws ToolInputError naming the files there are. */
export function fileOf(ctx: ToolContext, path: string): { path: string; content: string } {
  const files = materialOf(ctx);
  const file = files.find((f) => f.path === path);
  if (!file)
    throw new ToolInputError(
      `no file "${path}" in the material (files: ${files.map((f) => f.path).join(', ') || 'none'})`,
    );
  return file;
}
