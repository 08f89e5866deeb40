# The ipykernel versions the kernel tests run against, besides the main .venv's (the locked latest 7.x), each in its
# own venv: 6.29.5 (oldest supported), 6.31.0 (last 6.x), 7.0.1 (first 7.x: subshells, older internals), 7.3.0 (last
# before 7.4's concurrent comm dispatch). Sourced by scripts/lock.sh and scripts/kernel_envs.sh: each has a lock.
IPYKERNEL_VERSIONS="6.29.5 6.31.0 7.0.1 7.3.0"
