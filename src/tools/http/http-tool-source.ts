import { ConfigError } from '../../config/config-error.js';
import { createStaticToolSource, type ToolSourceFactory } from '../tool-source.js';
import { createHttpRequestTool } from './http-request-tool.js';

/** `http_request`, when the config has an `http:` section. */
export const httpToolSources: ToolSourceFactory = ({ config, env, fetch, problems }) => {
  if (!config.http) return [];
  try {
    return [createStaticToolSource({ kind: 'http', id: 'http' }, [createHttpRequestTool(config.http, { env, ...(fetch ? { fetch } : {}) })])];
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    problems.push(...error.problems);
    return [];
  }
};
