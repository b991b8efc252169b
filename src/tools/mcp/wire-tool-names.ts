import { createHash } from 'node:crypto';
import { wrapLanguageModel, type LanguageModel, type LanguageModelMiddleware } from 'ai';

/**
 * MCP tools are called `<server>.<tool>` everywhere inside the bot: policy rules (`k8s.*`), cards,
 * the audit trail and the stored history. Model APIs do not accept that: OpenAI (and Anthropic,
 * and most OpenAI-compatible servers) require tool names matching `^[a-zA-Z0-9_-]{1,64}$` and
 * reject the whole request otherwise. So the name is translated only on the wire, by a model
 * middleware: `fs.read_file` is sent as `fs__read_file`, and the model's calls are mapped back
 * before the AI SDK, the approval gate or the history ever see them.
 */

const WIRE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The name the model API sees for a tool. Pure and stable, so old history maps the same way. */
export function wireToolName(name: string): string {
  if (WIRE_NAME.test(name)) return name;
  const readable = name.replaceAll('.', '__').replace(/[^a-zA-Z0-9_-]/g, '_');
  if (readable.length > 0 && readable.length <= 64) return readable;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${readable.slice(0, 55)}_${hash}`;
}

type Params = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];

/** Wire name -> bot name for the tools of one model call (filled by `transformParams`). */
const reverseNames = new WeakMap<object, Map<string, string>>();

function renameParts<T>(value: T, rename: (name: string) => string): T {
  if (!Array.isArray(value)) return value;
  return value.map((part: unknown) =>
    typeof part === 'object' && part !== null && typeof (part as { toolName?: unknown }).toolName === 'string'
      ? { ...part, toolName: rename((part as { toolName: string }).toolName) }
      : part,
  ) as T;
}

export const toolNameMiddleware: LanguageModelMiddleware = {
  transformParams: async ({ params }) => {
    const reverse = new Map<string, string>();
    const tools = params.tools?.map((tool) => {
      if (tool.type !== 'function') return tool;
      const wire = wireToolName(tool.name);
      reverse.set(wire, tool.name);
      return { ...tool, name: wire };
    });
    const toolChoice = params.toolChoice?.type === 'tool' ? { ...params.toolChoice, toolName: wireToolName(params.toolChoice.toolName) } : params.toolChoice;
    const prompt = params.prompt.map((message) =>
      Array.isArray(message.content) ? { ...message, content: renameParts(message.content, wireToolName) } : message,
    ) as Params['prompt'];
    const transformed: Params = {
      ...params,
      prompt,
      ...(tools === undefined ? {} : { tools }),
      ...(toolChoice === undefined ? {} : { toolChoice }),
    };
    reverseNames.set(transformed, reverse);
    return transformed;
  },
  wrapGenerate: async ({ doGenerate, params }) => {
    const result = await doGenerate();
    const reverse = reverseNames.get(params);
    if (!reverse || reverse.size === 0) return result;
    return { ...result, content: renameParts(result.content, (name) => reverse.get(name) ?? name) };
  },
  wrapStream: async ({ doStream, params }) => {
    const result = await doStream();
    const reverse = reverseNames.get(params);
    if (!reverse || reverse.size === 0) return result;
    const rename = (name: string) => reverse.get(name) ?? name;
    return {
      ...result,
      stream: result.stream.pipeThrough(
        new TransformStream({
          transform(part, controller) {
            const named = part as { toolName?: unknown };
            controller.enqueue(typeof named.toolName === 'string' ? ({ ...part, toolName: rename(named.toolName) } as typeof part) : part);
          },
        }),
      ),
    };
  },
};

/**
 * The model as the bot should use it: tool names translated on the wire (see above). A model given
 * as a plain id string (AI Gateway) is returned unchanged.
 */
export function withWireToolNames(model: LanguageModel): LanguageModel {
  if (typeof model === 'string') return model;
  return wrapLanguageModel({ model, middleware: toolNameMiddleware });
}
