"""The COVID-19 scenario's training pieces: the CPU demo (``make demo``) and the fixed-policy baselines trained policies are measured against."""
