/* client/heureka.h: not written yet. */
