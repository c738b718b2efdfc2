/* exec_helper.c — the program lat_proc execs: does nothing, exits 0.
 * Built static and tiny so that `lat_proc exec` measures the kernel's
 * execve and process teardown, not a dynamic loader. */
int main(void) { return 0; }
