"""A TCP-like connection simulated over a lossy channel: handshake, data with retransmission, teardown."""
# entry: run_session(["hello", "world"], [4], "late data")
# kind: state_machine, simulation
from collections import deque, namedtuple
from dataclasses import dataclass, field

CLOSED = "CLOSED"
LISTEN = "LISTEN"
SYN_SENT = "SYN_SENT"
SYN_RECEIVED = "SYN_RECEIVED"
ESTABLISHED = "ESTABLISHED"
FIN_WAIT_1 = "FIN_WAIT_1"
FIN_WAIT_2 = "FIN_WAIT_2"
CLOSE_WAIT = "CLOSE_WAIT"
LAST_ACK = "LAST_ACK"
TIME_WAIT = "TIME_WAIT"

SYN, ACK, FIN = "SYN", "ACK", "FIN"
RETRANSMIT_AFTER = 3
MAX_TICKS = 40
CLIENT_ISN = 100
SERVER_ISN = 500

Segment = namedtuple("Segment", "source seq ack flags payload")


class ProtocolError(Exception):
    """An operation that the connection's current state does not allow."""


class InvalidTransition(ProtocolError):
    def __init__(self, name, state, event):
        super().__init__(f"{name}: no transition from {state} on {event}")
        self.state = state
        self.event = event


@dataclass
class Stats:
    sent: int = 0
    received: int = 0
    retransmitted: int = 0
    dropped: int = 0
    delivered: list = field(default_factory=list)


class Channel:
    """Carries segments one tick later; drops the segments whose send index is listed in drop."""

    def __init__(self, drop, stats):
        self.queue = deque()
        self.drop = set(drop)
        self.index = 0
        self.stats = stats

    def transmit(self, segment, now):
        self.index += 1
        if self.index in self.drop:
            self.stats.dropped += 1
            return False
        self.queue.append((now + 1, segment))
        return True

    def due(self, now):
        while self.queue and self.queue[0][0] <= now:
            yield self.queue.popleft()[1]


class Endpoint:
    def __init__(self, name, isn, channel, stats):
        self.name = name
        self.state = CLOSED
        self.next_seq = isn
        self.expected = None
        self.channel = channel
        self.stats = stats
        self.unacked = deque()
        self.outbox = deque()
        self.inbox = []
        self.history = [CLOSED]

    def __repr__(self):
        return f"Endpoint({self.name}, {self.state}, seq={self.next_seq}, unacked={len(self.unacked)})"

    def move(self, state):
        self.state = state
        self.history.append(state)

    def emit(self, flags, payload, now, track=True):
        segment = Segment(self.name, self.next_seq, self.expected, flags, payload)
        if track and (payload or SYN in flags or FIN in flags):
            self.unacked.append((now, segment))
            self.next_seq += max(1, len(payload))
        self.stats.sent += 1
        self.channel.transmit(segment, now)
        return segment

    def listen(self):
        if self.state != CLOSED:
            raise InvalidTransition(self.name, self.state, "listen")
        self.move(LISTEN)

    def connect(self, now):
        if self.state != CLOSED:
            raise InvalidTransition(self.name, self.state, "connect")
        self.emit((SYN,), "", now)
        self.move(SYN_SENT)

    def send(self, data, now):
        if self.state not in (ESTABLISHED, CLOSE_WAIT):
            raise ProtocolError(f"{self.name}: cannot send {data!r} in state {self.state}")
        self.outbox.append(data)
        self.flush(now)

    def flush(self, now):
        while self.outbox and not self.unacked:
            self.emit((ACK,), self.outbox.popleft(), now)

    def close(self, now):
        if self.state == ESTABLISHED:
            self.emit((FIN, ACK), "", now)
            self.move(FIN_WAIT_1)
        elif self.state == CLOSE_WAIT:
            self.emit((FIN, ACK), "", now)
            self.move(LAST_ACK)
        else:
            raise InvalidTransition(self.name, self.state, "close")

    def acknowledge(self, ack):
        """Drop every unacknowledged segment that ack covers; return how many were covered."""
        covered = 0
        while self.unacked:
            _, segment = self.unacked[0]
            end = segment.seq + max(1, len(segment.payload))
            if end > ack:
                break
            self.unacked.popleft()
            covered += 1
        return covered

    def receive(self, segment, now):
        self.stats.received += 1
        if ACK in segment.flags and segment.ack is not None:
            self.acknowledge(segment.ack)
        handler = TRANSITIONS.get((self.state, segment.flags))
        if handler is None:
            if segment.payload and self.state == ESTABLISHED:
                handler = Endpoint.on_data
            else:
                raise InvalidTransition(self.name, self.state, "+".join(segment.flags))
        handler(self, segment, now)
        self.flush(now)

    def on_syn(self, segment, now):
        self.expected = segment.seq + 1
        self.emit((SYN, ACK), "", now)
        self.move(SYN_RECEIVED)

    def on_duplicate(self, segment, now):
        """The peer repeated itself, so our reply was lost: send the oldest unacknowledged segment again."""
        if self.unacked:
            _, pending = self.unacked.popleft()
            self.unacked.appendleft((now, pending))
            self.stats.retransmitted += 1
            self.channel.transmit(pending, now)
        else:
            self.emit((ACK,), "", now, track=False)

    def on_syn_ack(self, segment, now):
        self.expected = segment.seq + 1
        self.emit((ACK,), "", now)
        self.move(ESTABLISHED)

    def on_ack(self, segment, now):
        if self.state == SYN_RECEIVED:
            self.move(ESTABLISHED)
        elif self.state == FIN_WAIT_1 and not self.unacked:
            self.move(FIN_WAIT_2)
        elif self.state == LAST_ACK and not self.unacked:
            self.move(CLOSED)
        elif segment.payload:
            self.on_data(segment, now)

    def on_data(self, segment, now):
        if segment.seq == self.expected:
            self.inbox.append(segment.payload)
            self.stats.delivered.append((self.name, segment.payload))
            self.expected += len(segment.payload)
        self.emit((ACK,), "", now, track=False)

    def on_fin(self, segment, now):
        self.expected = segment.seq + 1
        self.emit((ACK,), "", now, track=False)
        if self.state == ESTABLISHED:
            self.move(CLOSE_WAIT)
        elif self.state == FIN_WAIT_2:
            self.move(TIME_WAIT)

    def retransmit(self, now):
        if self.unacked and now - self.unacked[0][0] >= RETRANSMIT_AFTER:
            sent_at, segment = self.unacked.popleft()
            self.unacked.appendleft((now, segment))
            self.stats.retransmitted += 1
            self.channel.transmit(segment, now)


TRANSITIONS = {
    (LISTEN, (SYN,)): Endpoint.on_syn,
    (SYN_SENT, (SYN, ACK)): Endpoint.on_syn_ack,
    (SYN_RECEIVED, (SYN,)): Endpoint.on_duplicate,
    (SYN_RECEIVED, (ACK,)): Endpoint.on_ack,
    (ESTABLISHED, (SYN, ACK)): Endpoint.on_duplicate,
    (ESTABLISHED, (ACK,)): Endpoint.on_ack,
    (ESTABLISHED, (FIN, ACK)): Endpoint.on_fin,
    (FIN_WAIT_1, (ACK,)): Endpoint.on_ack,
    (FIN_WAIT_2, (FIN, ACK)): Endpoint.on_fin,
    (CLOSE_WAIT, (ACK,)): Endpoint.on_ack,
    (LAST_ACK, (ACK,)): Endpoint.on_ack,
    (TIME_WAIT, (FIN, ACK)): Endpoint.on_duplicate,
}


class Simulation:
    def __init__(self, drop):
        self.stats = Stats()
        self.channel = Channel(drop, self.stats)
        self.client = Endpoint("client", CLIENT_ISN, self.channel, self.stats)
        self.server = Endpoint("server", SERVER_ISN, self.channel, self.stats)
        self.now = 0

    def peer_of(self, segment):
        return self.server if segment.source == "client" else self.client

    def tick(self):
        self.now += 1
        for segment in list(self.channel.due(self.now)):
            self.peer_of(segment).receive(segment, self.now)
        for endpoint in (self.client, self.server):
            endpoint.retransmit(self.now)

    def run_until(self, condition):
        while self.now < MAX_TICKS:
            self.tick()
            if condition():
                return self.now
        raise ProtocolError(f"gave up at tick {self.now}")


def run_session(messages, drop, late_message):
    sim = Simulation(drop)
    client, server = sim.client, sim.server
    server.listen()
    client.connect(sim.now)
    sim.run_until(lambda: client.state == ESTABLISHED and server.state == ESTABLISHED)
    print(f"t={sim.now}: connected")
    for message in messages:
        client.send(message, sim.now)
    sim.run_until(lambda: len(server.inbox) == len(messages) and not client.unacked)
    print(f"t={sim.now}: server got {server.inbox}")
    client.close(sim.now)
    sim.run_until(lambda: server.state == CLOSE_WAIT)
    server.close(sim.now)
    sim.run_until(lambda: server.state == CLOSED and client.state == TIME_WAIT)
    print(f"t={sim.now}: closed; client {' > '.join(client.history)}")
    print(f"stats: {sim.stats}")
    client.send(late_message, sim.now)
    return sim.stats
