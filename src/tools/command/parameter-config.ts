/**
 * A command tool's parameter as the config declares it (after defaults are applied). The tool owns
 * this shape; `config/` checks the file against it, so the dependency runs config → tools only.
 */

export interface StringParameterConfig {
  type: 'string';
  description?: string;
  enum?: string[];
  /** Must match the whole value (it is anchored for you). */
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  default?: string;
  optional: boolean;
  /** Values starting with `-` are refused unless set, so the model cannot smuggle in `--all`. */
  allowLeadingDash: boolean;
}

export interface NumberParameterConfig {
  type: 'number';
  description?: string;
  integer: boolean;
  minimum?: number;
  maximum?: number;
  default?: number;
  optional: boolean;
  /**
   * Negative values of a placeholder that starts an argument (`kill -TERM {pid}` with -1) are
   * refused unless set: they would read as an option.
   */
  allowLeadingDash: boolean;
}

export interface BooleanParameterConfig {
  type: 'boolean';
  description?: string;
  default?: boolean;
  optional: boolean;
}

export type ParameterConfig = StringParameterConfig | NumberParameterConfig | BooleanParameterConfig;
