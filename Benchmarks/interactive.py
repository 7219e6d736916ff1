#!/usr/bin/env python3
"""Interactive figures: start to prompt (cachesh against sqlite3 :memory:), round trips with
100,000 cached keys, and the second Tab listing keys out of 100,000.

    python3 Benchmarks/interactive.py .build/release/cachesh
"""
import pexpect, time, os, statistics, sys, pty, select
env=dict(HOME='/tmp', TERM='xterm', LANG='C.UTF-8', EDITRC='', CACHESH_HISTORY='/dev/null', PATH=os.environ['PATH'], CACHESH_HINTS='0')
def startup(argv, prompt, n=30):
    ts=[]
    for _ in range(n):
        t=time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:
            os.execve(argv[0], argv, env)
        buf=b''
        while prompt not in buf:
            r,_,_=select.select([fd],[],[],5)
            if not r: raise SystemExit('timeout')
            buf+=os.read(fd, 4096)
        ts.append(time.perf_counter()-t)
        os.kill(pid, 9); os.waitpid(pid, 0); os.close(fd)
    return statistics.median(ts)*1000, min(ts)*1000
binp=os.path.abspath(sys.argv[1])
print("start to prompt cachesh (median, min ms): %.1f %.1f" % startup([binp], b'cachesh> '))
print("start to prompt sqlite3 :memory: (median, min ms): %.1f %.1f" % startup(['/usr/bin/sqlite3', ':memory:'], b'sqlite> '))
with open('/tmp/fill100k.cachesh','w') as f:
    f.write("ns feed max=200000\n")
    for i in range(100000): f.write(f"put feed:{i} {i}\n")
p=pexpect.spawn(binp, env=env, dimensions=(30,100), timeout=300, maxread=1<<20)
p.delaybeforesend=None
p.expect('cachesh> ')
t=time.perf_counter(); p.sendline('source /tmp/fill100k.cachesh'); p.expect('feed:99999'); p.expect('cachesh> '); print("source 100k puts incl. index rebuild: %.0f ms" % ((time.perf_counter()-t)*1000))
def rt(cmd):
    ts=[]
    for i in range(15):
        t=time.perf_counter(); p.sendline(cmd.format(i)); p.expect('cachesh> '); ts.append(time.perf_counter()-t)
    return statistics.median(ts)*1000
print("round trip with 100k keys, median ms: put (keys rebuilt) %.1f, now (no rebuild) %.1f" % (rt('put other:{} 1'), rt('now')))
ts=[]
for i in range(15):
    p.send('get feed:5432'); p.expect('5432'); p.send('\t'); p.expect('\x07')
    t=time.perf_counter(); p.send('\t'); p.expect('feed:54329'); p.expect('cachesh> get feed:5432'); ts.append(time.perf_counter()-t)
    p.send('\x15'); time.sleep(0.05)
    try: p.read_nonblocking(100000, timeout=0.1)
    except Exception: pass
print("second Tab (list of 11 keys out of 100k) to screen, median ms: %.1f" % (statistics.median(ts)*1000))
