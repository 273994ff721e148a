/* LD_PRELOAD shim: the process sees a CPU without some instruction-set features, so libraries that choose their
 * kernels by CPUID (ONNX Runtime's MLAS, bergamot's intgemm and MKL) take the kernels they take on that CPU.
 *
 * QIAO_CPUID_MASK selects the kind:
 *   avx2      a Zen 3 (AVX2, no AVX-512 at all, no VNNI of any width)
 *   avx512bw  a Skylake-X (AVX-512 F/CD/BW/DQ/VL, no VNNI, no VBMI, no BF16)
 * unset or empty: the shim does nothing. Any other value: the process stops at start with exit code 97.
 *
 * How: the constructor turns on CPUID faulting (arch_prctl(ARCH_SET_CPUID, 0); the CPU flag `cpuid_fault`), so
 * every CPUID instruction raises SIGSEGV. The handler recognises CPUID (0F A2) at the faulting RIP, turns CPUID
 * back on, runs it for the saved EAX/ECX, turns it off again, clears the masked bits, writes EAX..EDX into the
 * saved registers and steps over the instruction. The setting is per thread, kept across clone and fork, reset by
 * execve (where the shim, still preloaded, sets it again). CPUID run before the constructor (ld.so's and glibc's
 * own at start) is not masked; the libraries above detect their CPU later, when they are loaded.
 *
 * The handler stays the process's SIGSEGV handler: sigaction() and signal() for SIGSEGV are interposed and
 * recorded instead (Python's faulthandler, which pytest enables, installs one), and any SIGSEGV that is not CPUID
 * goes to the recorded handler, or ends the process with the default action.
 *
 * Build: gcc -O2 -shared -fPIC -o cpuid_mask.so cpuid_mask.c -ldl
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef ARCH_SET_CPUID
#define ARCH_SET_CPUID 0x1012
#endif

#define BIT(n) (1u << (n))

enum kind { NONE, AVX2, AVX512BW };

static enum kind kind = NONE;
static struct sigaction recorded; /* what the program asked for SIGSEGV (SIG_DFL until it asks) */
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

/* Leaf 7 sub-leaf 0. EBX: avx512f 16, avx512dq 17, avx512ifma 21, avx512pf 26, avx512er 27, avx512cd 28,
 * avx512bw 30, avx512vl 31. ECX: avx512_vbmi 1, avx512_vbmi2 6, gfni 8, vaes 9, vpclmulqdq 10, avx512_vnni 11,
 * avx512_bitalg 12, avx512_vpopcntdq 14. EDX: avx512_4vnniw 2, avx512_4fmaps 3, avx512_vp2intersect 8,
 * amx_bf16 22, avx512_fp16 23, amx_tile 24, amx_int8 25. Sub-leaf 1 EAX: avx_vnni 4, avx512_bf16 5. */
static const uint32_t AVX512_EBX = BIT(16) | BIT(17) | BIT(21) | BIT(26) | BIT(27) | BIT(28) | BIT(30) | BIT(31);
static const uint32_t BEYOND_BW_EBX = BIT(21) | BIT(26) | BIT(27); /* ifma, pf, er: not on Skylake-X */
static const uint32_t AVX512_ECX = BIT(1) | BIT(6) | BIT(11) | BIT(12) | BIT(14);
static const uint32_t EDX_7 = BIT(2) | BIT(3) | BIT(8) | BIT(22) | BIT(23) | BIT(24) | BIT(25);
static const uint32_t EAX_7_1 = BIT(4) | BIT(5);

static void mask(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  if (leaf == 7 && sub == 0) {
    if (kind == AVX2) {
      r[1] &= ~AVX512_EBX;
      r[2] &= ~(AVX512_ECX | BIT(8)); /* Zen 3 has VAES and VPCLMULQDQ, no GFNI */
    } else {
      r[1] &= ~BEYOND_BW_EBX;
      r[2] &= ~(AVX512_ECX | BIT(8) | BIT(9) | BIT(10));
    }
    r[3] &= ~EDX_7;
  } else if (leaf == 7 && sub == 1) {
    r[0] &= ~EAX_7_1;
  }
}

static long cpuid_enabled(int on) { return syscall(SYS_arch_prctl, ARCH_SET_CPUID, on); }

static void chain(int sig, siginfo_t *info, void *context) {
  struct sigaction action = recorded;
  if (action.sa_flags & SA_SIGINFO) {
    if (action.sa_sigaction != NULL) {
      action.sa_sigaction(sig, info, context);
      return;
    }
  } else if (action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN) {
    action.sa_handler(sig);
    return;
  }
  /* the default action: a fault re-executes and ends the process; a sent signal is sent again */
  struct sigaction fallback;
  memset(&fallback, 0, sizeof fallback);
  fallback.sa_handler = SIG_DFL;
  real_sigaction(SIGSEGV, &fallback, NULL);
  if (info->si_code <= 0) raise(sig);
}

static void on_segv(int sig, siginfo_t *info, void *context) {
  ucontext_t *uc = context;
  greg_t *regs = uc->uc_mcontext.gregs;
  /* CPUID faulting raises a general protection fault: si_code SI_KERNEL, RIP on the instruction (readable) */
  if (info->si_code == SI_KERNEL) {
    const unsigned char *ip = (const unsigned char *)regs[REG_RIP];
    if (ip[0] == 0x0f && ip[1] == 0xa2) {
      uint32_t r[4];
      uint32_t leaf = (uint32_t)regs[REG_RAX], sub = (uint32_t)regs[REG_RCX];
      cpuid_enabled(1);
      __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
      cpuid_enabled(0);
      mask(leaf, sub, r);
      regs[REG_RAX] = r[0]; /* CPUID writes the 32-bit registers: the upper halves become zero */
      regs[REG_RBX] = r[1];
      regs[REG_RCX] = r[2];
      regs[REG_RDX] = r[3];
      regs[REG_RIP] += 2;
      return;
    }
  }
  chain(sig, info, context);
}

static int install(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_segv;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  return real_sigaction(SIGSEGV, &action, NULL);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (real_sigaction == NULL) real_sigaction = dlsym(RTLD_NEXT, "sigaction");
  if (kind == NONE || sig != SIGSEGV) return real_sigaction(sig, act, old);
  if (old != NULL) *old = recorded;
  if (act != NULL) recorded = *act;
  return 0;
}

sighandler_t signal(int sig, sighandler_t handler) {
  struct sigaction action, old;
  memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(sig, &action, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

static void say(const char *text) {
  ssize_t ignored = write(2, text, strlen(text));
  (void)ignored;
}

__attribute__((constructor)) static void start(void) {
  if (real_sigaction == NULL) real_sigaction = dlsym(RTLD_NEXT, "sigaction");
  const char *wanted = getenv("QIAO_CPUID_MASK");
  if (wanted == NULL || wanted[0] == '\0') return;
  if (strcmp(wanted, "avx2") == 0) {
    kind = AVX2;
  } else if (strcmp(wanted, "avx512bw") == 0) {
    kind = AVX512BW;
  } else {
    say("cpuid_mask: QIAO_CPUID_MASK must be avx2 or avx512bw\n");
    _exit(97);
  }
  memset(&recorded, 0, sizeof recorded);
  recorded.sa_handler = SIG_DFL;
  if (install() != 0 || cpuid_enabled(0) != 0) {
    say("cpuid_mask: cannot fault on CPUID here (no cpuid_fault?)\n");
    _exit(97);
  }
}
