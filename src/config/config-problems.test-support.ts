import { ConfigError } from './config-error.js';
import { parseConfigFile } from './config-file.js';

/** The problems a config file is rejected with (as `countersign.yml`); fails the test when it is accepted. */
export function problemsOf(yamlText: string) {
  try {
    parseConfigFile(yamlText, 'countersign.yml');
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
