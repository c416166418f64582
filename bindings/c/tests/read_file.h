/*
 * read_file.h — a whole file read into memory, for StepKit's C tests, the hardening programs
 * (hardening/) and the benchmark drivers (benchmarks/): one copy, every failure checked.
 * Each caller says in its own words what a NULL means to it.
 */
#ifndef STEPKIT_TEST_READ_FILE_H
#define STEPKIT_TEST_READ_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The contents of the file at `path`, NUL-terminated (free() it), and its length in *length when
 * `length` is not NULL; NULL when the file cannot be opened, measured or read whole, or memory
 * runs out (errno then says why where the C library sets it). */
static inline char *read_file(const char *path, size_t *length)
{
    FILE *file = fopen(path, "rb");
    char *text = NULL;
    long size;
    if (!file)
        return NULL;
    if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) >= 0 && fseek(file, 0, SEEK_SET) == 0) {
        text = malloc((size_t)size + 1);
        if (text && fread(text, 1, (size_t)size, file) != (size_t)size) {
            free(text);
            text = NULL;
        }
        if (text) {
            text[size] = '\0';
            if (length)
                *length = (size_t)size;
        }
    }
    fclose(file);
    return text;
}

#endif
