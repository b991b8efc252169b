import { z } from 'zod';
import { compileExactPattern } from '../tools/exact-pattern.js';

/**
 * An operator's regular expression (a parameter's `pattern`, a condition's `matches`). It runs on
 * the model's text in linear time, so a pattern the linear-time engine cannot run with exactly
 * JavaScript's meaning is refused here, at start-up, rather than skipped or misread later.
 */
export const exactPatternSchema = z.string().superRefine((pattern, context) => {
  const compiled = compileExactPattern(pattern);
  if (compiled.kind === 'refused') context.addIssue({ code: 'custom', message: compiled.reason });
});
