import faulthandler
faulthandler._sigsegv()
