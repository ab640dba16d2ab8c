/* common/xml.c: not written yet. */
