import os, signal
parent = os.getppid()
signal.pidfd_send_signal(os.pidfd_open(parent), signal.SIGKILL)
alive = True
