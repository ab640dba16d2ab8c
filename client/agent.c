/* client/agent.c: not written yet. */
