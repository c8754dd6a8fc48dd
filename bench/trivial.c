/* trivial: the floor of the benchmark. A plain CGI that links only libc and answers a small
 * JSON body, so its cost is Apache + mod_cgid + fork/exec and nothing else. bench/run.sh
 * builds it into bench/work/ and serves it from a second Apache (bench/trivial-httpd.conf). */
#include <stdio.h>

int
main(void)
{
	fputs("Content-Type: application/json\r\n"
	    "Cache-Control: no-store\r\n"
	    "\r\n"
	    "{\"status\":\"UP\",\"service\":\"courts-bench\",\"floor\":true}\n", stdout);
	return 0;
}
