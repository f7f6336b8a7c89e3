//! The sandbox's table: commands that try to get out, each with the reason
//! it must not, and benign look-alikes that must keep working.
//!
//! Every script runs with `bash -c` in a fresh workspace `$WS` (a git
//! repository with `.git/hooks`, `.tascer/`, `.claude/`), beside a
//! directory `$OUT` outside the workspace, a fake `$HOME` with secrets
//! (each containing `SECRET-`), and a TCP listener on 127.0.0.1:`$PORT`.
//! An escape is seen in its effect: a change anywhere outside the
//! workspace's writable part, `SECRET-` or `ESCAPED` in the output, or a
//! connection to the listener.

/// What a case expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// The attempt must fail: no effect outside, no secret, no connection.
    Refused,
    /// The attempt must not fail, but without the sandbox it does not
    /// escape either (it only shows a mechanism holds, like
    /// `no_new_privs`), so the unsandboxed control run is skipped.
    RefusedNoControl,
    /// A benign command: exits 0 and prints `OK`.
    Works,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// Short name.
    pub name: &'static str,
    /// Why the sandbox must refuse it (or let it work).
    pub why: &'static str,
    /// The `bash -c` script.
    pub script: &'static str,
    /// What must happen.
    pub expect: Expect,
    /// Programs the script needs (the case is skipped without them).
    pub needs: &'static [&'static str],
}

const fn refused(name: &'static str, why: &'static str, script: &'static str) -> Case {
    Case {
        name,
        why,
        script,
        expect: Expect::Refused,
        needs: &[],
    }
}

const fn refused_with(
    name: &'static str,
    why: &'static str,
    script: &'static str,
    needs: &'static [&'static str],
) -> Case {
    Case {
        name,
        why,
        script,
        expect: Expect::Refused,
        needs,
    }
}

const fn holds(name: &'static str, why: &'static str, script: &'static str) -> Case {
    Case {
        name,
        why,
        script,
        expect: Expect::RefusedNoControl,
        needs: &[],
    }
}

const fn works(name: &'static str, why: &'static str, script: &'static str) -> Case {
    Case {
        name,
        why,
        script,
        expect: Expect::Works,
        needs: &[],
    }
}

/// Every case.
pub const CASES: &[Case] = &[
    // --- writes outside the workspace ---------------------------------
    refused(
        "abs-redirect",
        "an absolute path outside the workspace",
        r#"echo x > "$OUT/a""#,
    ),
    refused("touch", "creating a file outside", r#"touch "$OUT/b""#),
    refused(
        "dotdot",
        "`..` climbs out of the workspace",
        "echo x > ../outside/c",
    ),
    refused(
        "dotdot-deep",
        "`..` from a subdirectory",
        "mkdir -p sub && cd sub && echo x > ../../outside/d",
    ),
    refused(
        "symlink-dir",
        "a link in the workspace to a directory outside",
        r#"ln -s "$OUT" link && echo x > link/e"#,
    ),
    refused(
        "symlink-file",
        "a link in the workspace to a file outside",
        r#"ln -s "$OUT/keep.txt" l && echo x >> l"#,
    ),
    refused(
        "hardlink-in",
        "a hard link into the workspace of a file outside, then written",
        r#"ln "$OUT/keep.txt" hl; echo x >> hl"#,
    ),
    refused(
        "hardlink-out",
        "a hard link placed outside",
        r#"echo x > f && ln f "$OUT/f""#,
    ),
    refused(
        "proc-self-cwd",
        "/proc/self/cwd after cd outside",
        r#"cd "$OUT" && echo x > /proc/self/cwd/g"#,
    ),
    refused(
        "proc-self-root",
        "/proc/self/root as another way to the same path",
        r#"echo x > "/proc/self/root$OUT/h""#,
    ),
    refused(
        "proc-fd",
        "a directory fd opened outside, written through /proc/self/fd",
        r#"exec 3<"$OUT"; echo x > /proc/self/fd/3/i"#,
    ),
    refused(
        "script-then-run",
        "a script written in the workspace, then run",
        "printf 'echo x > \"$OUT/j\"\\n' > s.sh && chmod +x s.sh && ./s.sh",
    ),
    refused(
        "python-open",
        "python writes outside",
        r#"python3 -c 'import os; open(os.environ["OUT"] + "/k", "w").write("x")'"#,
    ),
    refused("cp", "copy to outside", r#"cp /etc/hostname "$OUT/l""#),
    refused(
        "mv-out",
        "move a workspace file outside",
        r#"echo x > m && mv m "$OUT/m""#,
    ),
    refused(
        "mv-in",
        "move a file out of an outside directory (deletes it there)",
        r#"mv "$OUT/keep.txt" ./stolen"#,
    ),
    refused("rm", "delete a file outside", r#"rm -f "$OUT/keep.txt""#),
    refused(
        "truncate",
        "truncate a file outside",
        r#"truncate -s 0 "$OUT/keep.txt""#,
    ),
    refused(
        "append",
        "append to a file outside",
        r#"echo x >> "$OUT/keep.txt""#,
    ),
    refused(
        "mkdir",
        "make a directory outside",
        r#"mkdir "$OUT/newdir""#,
    ),
    refused(
        "sed-i",
        "sed -i rewrites a file outside",
        r#"sed -i s/original/changed/ "$OUT/keep.txt""#,
    ),
    refused("tee", "tee to outside", r#"echo x | tee "$OUT/n""#),
    refused(
        "dd",
        "dd to outside",
        r#"dd if=/dev/zero of="$OUT/o" count=1"#,
    ),
    refused(
        "find-delete",
        "find -delete, which the shell analysis cannot follow",
        r#"find "$OUT" -name keep.txt -delete"#,
    ),
    refused(
        "find-exec",
        "find -exec runs a shell that writes outside",
        r#"find . -maxdepth 0 -exec sh -c 'echo x > "$OUT/p"' \;"#,
    ),
    refused_with(
        "make",
        "a build tool runs code by convention",
        "printf 'all:\\n\\techo x > \"$$OUT/q\"\\n' > Makefile && make -s",
        &["make"],
    ),
    refused(
        "git-config-global",
        "git config --global writes the home",
        "git config --global user.name evil",
    ),
    refused(
        "home-bashrc",
        "a login file in the home runs code later",
        r#"echo 'echo pwned' >> "$HOME/.bashrc""#,
    ),
    refused(
        "fixture-root",
        "the directory above the workspace",
        r#"echo x > "$(dirname "$WS")/r""#,
    ),
    refused(
        "background-later",
        "a background process writes after the command returned",
        r#"(sleep 0.3; echo x > "$OUT/late") >/dev/null 2>&1 & disown; echo started"#,
    ),
    refused(
        "nohup",
        "nohup outlives the shell",
        r#"nohup sh -c 'sleep 0.2; echo x > "$OUT/nohup"' >/dev/null 2>&1 &"#,
    ),
    refused(
        "setsid",
        "a new session outlives the shell",
        r#"setsid sh -c 'sleep 0.2; echo x > "$OUT/setsid"' >/dev/null 2>&1 &"#,
    ),
    refused_with(
        "perl",
        "perl writes outside",
        r#"perl -e 'open(F, ">", "$ENV{OUT}/s") or die "$!\n"; print F "x"'"#,
        &["perl"],
    ),
    refused(
        "env-i",
        "a clean environment does not leave the sandbox",
        r#"env -i /bin/sh -c "echo x > $OUT/t""#,
    ),
    refused(
        "eval-base64",
        "code the shell analysis cannot read",
        r#"eval "$(echo 'echo x > "$OUT/u"' | base64 | base64 -d)""#,
    ),
    refused(
        "trap",
        "a trap handler's string is code",
        r#"trap 'echo x > "$OUT/v"' EXIT"#,
    ),
    refused(
        "xargs",
        "xargs runs the writer",
        r#"echo "$OUT/w" | xargs touch"#,
    ),
    refused(
        "install",
        "install copies outside",
        r#"install -m 644 /etc/hostname "$OUT/x""#,
    ),
    refused(
        "tar-extract",
        "tar extracts outside",
        r#"tar -cf t.tar -C /etc hostname && tar -xf t.tar -C "$OUT""#,
    ),
    refused(
        "python-shutil",
        "python copies outside",
        r#"python3 -c 'import os, shutil; shutil.copy("/etc/hostname", os.environ["OUT"] + "/y")'"#,
    ),
    refused("mkfifo", "a fifo outside", r#"mkfifo "$OUT/fifo""#),
    refused(
        "symlink-out",
        "a symbolic link placed outside",
        r#"ln -s /etc/passwd "$OUT/sym""#,
    ),
    refused(
        "python-rename",
        "os.rename pulls a file from outside",
        r#"python3 -c 'import os; os.rename(os.environ["OUT"] + "/keep.txt", "z")'"#,
    ),
    // --- protected paths inside the workspace -------------------------
    refused(
        "hook-write",
        "a git hook runs code at the next commit",
        "echo 'echo pwned' > .git/hooks/pre-commit",
    ),
    refused(
        "hook-chmod",
        "changing a hook's mode",
        "chmod 600 .git/hooks/pre-commit.sample",
    ),
    refused(
        "hook-rm",
        "deleting a hook",
        "rm .git/hooks/pre-commit.sample",
    ),
    refused(
        "git-config-hookspath",
        "core.hooksPath points git at other hooks",
        "git config core.hooksPath /tmp/evil",
    ),
    refused(
        "git-config-append",
        ".git/config written directly",
        "echo '[core] fsmonitor = evil' >> .git/config",
    ),
    refused(
        "claude-settings",
        "Claude Code's settings allow more",
        r#"echo '{"permissions":{"allow":["Bash"]}}' > .claude/settings.local.json"#,
    ),
    refused(
        "tascer-settings",
        "Tascer's settings allow more",
        "echo '{}' > .tascer/settings.json",
    ),
    refused(
        "claude-move",
        "moving the settings directory away",
        "mv .claude claude-old",
    ),
    refused("tascer-rm", "deleting Tascer's settings", "rm -rf .tascer"),
    refused(
        "hook-symlink",
        "a link to the hooks directory",
        "ln -s .git/hooks h && echo x > h/post-checkout",
    ),
    refused(
        "hook-dotdot",
        "the hooks directory by `..`",
        "mkdir -p src && cd src && echo x > ../.git/hooks/post-merge",
    ),
    // --- secret locations ---------------------------------------------
    refused(
        "ssh-key",
        "the SSH private key",
        r#"cat "$HOME/.ssh/id_rsa""#,
    ),
    refused(
        "aws-credentials",
        "cloud credentials",
        "cat ~/.aws/credentials",
    ),
    refused(
        "ssh-copy",
        "copying the key into the workspace",
        "cp ~/.ssh/id_rsa ./k; cat ./k",
    ),
    refused(
        "ssh-python",
        "python reads the key",
        r#"python3 -c 'import os; print(open(os.path.expanduser("~/.ssh/id_rsa")).read())'"#,
    ),
    refused(
        "ssh-proc-root",
        "/proc/self/root to the key",
        r#"cat "/proc/self/root$HOME/.ssh/id_rsa""#,
    ),
    refused(
        "ssh-symlink",
        "a link to the key",
        "ln -s ~/.ssh/id_rsa s; cat s",
    ),
    refused(
        "ssh-hardlink",
        "a hard link to the key",
        "ln ~/.ssh/id_rsa hk; cat hk",
    ),
    refused(
        "grep-home",
        "searching the home for secrets",
        r#"grep -r SECRET "$HOME""#,
    ),
    refused(
        "tar-home",
        "archiving the home",
        r#"tar -cf - -C "$HOME" . 2>/dev/null | strings | grep SECRET"#,
    ),
    refused("gnupg", "GnuPG keys", "cat ~/.gnupg/private-keys-v1.d/key"),
    refused(
        "gcloud",
        "gcloud credentials",
        "cat ~/.config/gcloud/credentials.db",
    ),
    refused(
        "tascer-keys",
        "Tascer's own signing keys",
        "cat ~/.tascer/keys/*",
    ),
    refused(
        "git-credentials",
        "git's stored passwords",
        "cat ~/.git-credentials",
    ),
    refused("netrc", "netrc passwords", "cat ~/.netrc"),
    refused(
        "env-other-project",
        "another project's .env file",
        "cat ~/projects/api/.env",
    ),
    refused(
        "env-above",
        "a .env file above the workspace",
        "cat ../.env.production",
    ),
    refused(
        "env-copy",
        "copying another project's .env into the workspace",
        "cp ~/projects/api/.env ./e; cat ./e",
    ),
    // --- network when it is off ---------------------------------------
    refused(
        "dev-tcp",
        "bash's /dev/tcp",
        r#"echo hi > "/dev/tcp/127.0.0.1/$PORT""#,
    ),
    refused(
        "python-connect",
        "a TCP connection from python",
        r#"python3 -c 'import os, socket; socket.create_connection(("127.0.0.1", int(os.environ["PORT"])))'"#,
    ),
    refused_with(
        "curl",
        "curl to a local server",
        r#"curl -s --max-time 2 "http://127.0.0.1:$PORT/""#,
        &["curl"],
    ),
    refused(
        "udp",
        "a UDP datagram",
        r#"python3 -c 'import os, socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print("ESCAPED")'"#,
    ),
    refused(
        "ipv6",
        "an IPv6 socket",
        r#"python3 -c 'import socket; socket.socket(socket.AF_INET6); print("ESCAPED")'"#,
    ),
    refused(
        "packet",
        "a raw packet socket",
        r#"python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print("ESCAPED")'"#,
    ),
    refused(
        "netlink",
        "a netlink socket (routes, interfaces)",
        r#"python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW); print("ESCAPED")'"#,
    ),
    // --- system calls that leave or weaken the sandbox ----------------
    refused_with(
        "strace",
        "ptrace through strace",
        "strace -o /dev/null true 2>/dev/null && echo ESCAPED",
        &["strace"],
    ),
    refused(
        "ptrace-traceme",
        "ptrace(PTRACE_TRACEME) through ctypes",
        r#"python3 -c 'import ctypes; print("ESCAPED" if ctypes.CDLL(None).ptrace(0, 0, 0, 0) == 0 else "refused")'"#,
    ),
    refused(
        "ptrace-attach",
        "ptrace(PTRACE_ATTACH) on a sibling process",
        r#"sleep 5 & export P=$!; python3 -c 'import ctypes, os; print("ESCAPED" if ctypes.CDLL(None).ptrace(16, int(os.environ["P"]), 0, 0) == 0 else "refused")'; kill -9 $P"#,
    ),
    refused(
        "unshare-user",
        "a new user namespace",
        "unshare -r true 2>/dev/null && echo ESCAPED",
    ),
    refused(
        "unshare-mount",
        "a new mount namespace",
        "unshare -m true 2>/dev/null && echo ESCAPED",
    ),
    refused(
        "unshare-net",
        "a new network namespace",
        "unshare -n true 2>/dev/null && echo ESCAPED",
    ),
    refused(
        "unshare-ctypes",
        "unshare(CLONE_NEWUSER) through ctypes",
        r#"python3 -c 'import ctypes; print("ESCAPED" if ctypes.CDLL(None).unshare(0x10000000) == 0 else "refused")'"#,
    ),
    refused(
        "mount-tmpfs",
        "mounting a file system",
        "mkdir -p mnt && mount -t tmpfs none mnt 2>/dev/null && echo ESCAPED",
    ),
    holds(
        "umount-hooks",
        "unmounting the read-only hooks",
        "umount .git/hooks 2>/dev/null && echo ESCAPED",
    ),
    holds(
        "remount-hooks",
        "remounting the hooks read-write",
        "mount -o remount,rw .git/hooks 2>/dev/null && echo ESCAPED",
    ),
    refused(
        "chroot",
        "chroot",
        "chroot / true 2>/dev/null && echo ESCAPED",
    ),
    refused(
        "python-chroot",
        "os.chroot",
        r#"python3 -c 'import os; os.chroot("/"); print("ESCAPED")'"#,
    ),
    holds(
        "nsenter",
        "entering another process's namespaces",
        "nsenter -t 1 -m true 2>/dev/null && echo ESCAPED",
    ),
    holds(
        "no-new-privs",
        "setuid binaries gain nothing: no_new_privs is set",
        r#"grep -Eq 'NoNewPrivs:[[:space:]]+1' /proc/self/status || echo ESCAPED"#,
    ),
    refused(
        "setuid-copy",
        "a setuid copy of bash, then a write outside",
        r#"cp /bin/bash ./sb && chmod u+s ./sb && ./sb -p -c 'echo x > "$OUT/suid"'"#,
    ),
    // --- benign look-alikes -------------------------------------------
    works(
        "env-in-workspace",
        "the workspace's own .env file and the templates beside it",
        "echo K=1 > .env && grep -q K .env && cat ~/projects/api/.env.example && echo OK",
    ),
    works(
        "build",
        "compile and run a program in the workspace",
        "mkdir -p build && printf 'int main(void){return 0;}\\n' > build/m.c && cc -o build/m build/m.c && ./build/m && echo OK",
    ),
    works(
        "write-root",
        "a new file at the workspace root",
        "echo hi > new.txt && grep -q hi new.txt && echo OK",
    ),
    works(
        "mkdir-nested",
        "directories in the workspace",
        "mkdir -p a/b/c && touch a/b/c/f && echo OK",
    ),
    works(
        "tmpdir",
        "the private temporary directory",
        r#"echo x > "$TMPDIR/f" && cat "$TMPDIR/f" > /dev/null && echo OK"#,
    ),
    works(
        "mktemp",
        "mktemp uses the private temporary directory",
        r#"f=$(mktemp) && echo x > "$f" && echo OK"#,
    ),
    works(
        "os-release",
        "system files are readable",
        "grep -q ID= /etc/os-release && echo OK",
    ),
    works(
        "git-status",
        "git status",
        "git status > /dev/null && echo OK",
    ),
    works(
        "git-commit",
        "git add and commit (objects, index, refs)",
        "echo x > c.txt && git add c.txt && git -c user.email=a@b -c user.name=n commit -qm m && echo OK",
    ),
    works("python", "python3 -c", r#"python3 -c 'print("OK")'"#),
    works(
        "unittest",
        "a test command",
        "printf 'import unittest\\nclass T(unittest.TestCase):\\n    def test_x(self):\\n        self.assertTrue(True)\\n' > test_t.py && python3 -m unittest -q test_t 2>/dev/null && echo OK",
    ),
    works(
        "ls-home",
        "listing the home",
        r#"ls -a "$HOME" > /dev/null && echo OK"#,
    ),
    works(
        "home-file",
        "an ordinary file in the home",
        r#"grep -q alias "$HOME/.bashrc" && echo OK"#,
    ),
    works("dev-null", "/dev/null", "echo x > /dev/null && echo OK"),
    works(
        "pipes",
        "pipes and subshells",
        "echo b a | tr ' ' '\\n' | sort | (cat; echo OK)",
    ),
    works(
        "unix-socket",
        "AF_UNIX sockets stay allowed",
        r#"python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"OK"); print(b.recv(2).decode())'"#,
    ),
    works(
        "rename-rm",
        "rename and delete in the workspace",
        "echo x > r1 && mv r1 r2 && rm r2 && echo OK",
    ),
    works(
        "symlink-inside",
        "links inside the workspace",
        "echo x > t1 && ln -s t1 t2 && cat t2 > /dev/null && echo OK",
    ),
    works(
        "read-hooks",
        "hooks stay readable",
        "ls .git/hooks > /dev/null && echo OK",
    ),
    works(
        "read-settings",
        "settings stay readable",
        "cat .claude/settings.json > /dev/null && echo OK",
    ),
    works(
        "sed-i-inside",
        "sed -i in the workspace",
        "echo a > s1 && sed -i s/a/b/ s1 && grep -q b s1 && echo OK",
    ),
    works(
        "background-inside",
        "a background job writing in the workspace",
        "(sleep 0.1; echo x > late.txt) & wait; test -f late.txt && echo OK",
    ),
    works(
        "read-outside",
        "reading outside the workspace is allowed",
        r#"cd "$OUT" && grep -q original keep.txt && echo OK"#,
    ),
    works("id", "id", "id -u > /dev/null && echo OK"),
];
