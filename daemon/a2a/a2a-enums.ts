// The SDK's TaskState and Role as plain constants of the SDK's own enum types: the enums are values of its module,
// and reading one would load the whole SDK (megabytes of heap for the daemon's life) into every daemon, A2A or not.
// The type checks each value against the SDK's member of that name, and that no member is left out. The SDK itself
// loads only where a served agent's endpoint (a2a-endpoint.ts) or a task's JSON (a2a-task-store.ts) needs it.
import type { Role as SdkRole, TaskState as SdkTaskState } from '@a2a-js/sdk';

/** Every member of enum E, each typed as that member (not the reverse mapping, number → name). */
type Members<E> = { readonly [K in keyof E as K extends string ? K : never]: E[K] };

export type TaskState = SdkTaskState;
export const TaskState: Members<typeof SdkTaskState> = {
  TASK_STATE_UNSPECIFIED: 0,
  TASK_STATE_SUBMITTED: 1,
  TASK_STATE_WORKING: 2,
  TASK_STATE_COMPLETED: 3,
  TASK_STATE_FAILED: 4,
  TASK_STATE_CANCELED: 5,
  TASK_STATE_INPUT_REQUIRED: 6,
  TASK_STATE_REJECTED: 7,
  TASK_STATE_AUTH_REQUIRED: 8,
  UNRECOGNIZED: -1,
};

export type Role = SdkRole;
export const Role: Members<typeof SdkRole> = { ROLE_UNSPECIFIED: 0, ROLE_USER: 1, ROLE_AGENT: 2, UNRECOGNIZED: -1 };
