"""vm-run (scripts/vm-run, make vm-run): the suite on another kernel in a
QEMU guest. scripts/lab/lava uses its parts too (the kernel package, the
transfer of a run, the KVM probe).

Modules, each importing only those above it:
  common     ROOT, PROG, say(), the errors Usage (exit 2) and Failure
  arch       the guest's architecture (x86_64, arm64) and which a kernel asks for
  elf        what an ELF header says (static, machine)
  kernel     what KERNEL is: an image (and its release), a .deb, a package name
  modules    the kernel's modules: built in, module, missing; load order
  initramfs  the guest's initramfs (its init runs kbench-run) and the probe's
  packages   Debian packages fetched and unpacked, never installed; the tools
             vm-run needs, installed when missing
  qemu       QEMU's command line, the KVM probe and the accelerator it chooses
  guest      the running guest: its console relayed, stopped at the limit
  results    the run back from the guest: checked, moved into place
  steps      the steps of one run, in order
  cli        the options and main (scripts/vm-run calls it)
"""
