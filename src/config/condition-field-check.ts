import type { CountersignConfig, PolicyCondition } from './config-schema.js';
import type { TemplateProblem } from './command-template-check.js';
import { HTTP_REQUEST_PARAMETERS, HTTP_REQUEST_TOOL_NAME } from './http-config-schema.js';

/**
 * A condition on a field the tool does not have never matches (an absent field is the one sure
 * "unmet", see input-condition.ts), so a misspelled `namspace` would let a prod restart run with no
 * card or under a laxer rule. Only rules naming nothing but command tools or `http_request` are
 * checked: their parameters are known here, while MCP and custom tools' schemas (and what a glob
 * may match) are only known at run time.
 */
export function checkConditionFields(config: CountersignConfig): TemplateProblem[] {
  const parametersByTool = new Map<string, readonly string[]>(config.tools.map((tool) => [tool.name, Object.keys(tool.parameters)]));
  if (config.http !== undefined) parametersByTool.set(HTTP_REQUEST_TOOL_NAME, HTTP_REQUEST_PARAMETERS);
  const problems: TemplateProblem[] = [];

  config.policy.rules.forEach((rule, ruleIndex) => {
    const known = rule.tools.flatMap((name) => {
      const parameters = parametersByTool.get(name);
      return parameters === undefined ? [] : [{ name, parameters }];
    });
    if (known.length === 0 || known.length !== rule.tools.length) return;
    const check = (conditions: readonly PolicyCondition[], at: (string | number)[]) => {
      conditions.forEach((condition, index) => {
        const first = condition.field.split('.')[0] ?? condition.field;
        for (const tool of known) {
          if (tool.parameters.includes(first)) continue;
          const declared = tool.parameters.length === 0 ? 'declares no parameters' : `declares only ${tool.parameters.join(', ')}`;
          problems.push({ path: ['policy', 'rules', ruleIndex, ...at, index, 'field'], message: `names ${first}, which ${tool.name} does not have (it ${declared}); the condition would never match` });
        }
      });
    };
    if (rule.input !== undefined) check(rule.input, ['input']);
    if (typeof rule.approval === 'object') check(rule.approval.when, ['approval', 'when']);
  });
  return problems;
}
