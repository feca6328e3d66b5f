import socket, sys
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.sendmsg([b"leak"], [], 0, ("127.0.0.1", int(sys.argv[2])))
