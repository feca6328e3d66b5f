"""A traffic-light controller state machine driven by a timeline of ticks and pedestrian button presses."""
# entry: run_controller(14, [3, 9])
# kind: state_machine, simulation

GREEN, YELLOW, RED, WALK = "green", "yellow", "red", "walk"
DURATIONS = {GREEN: 5, YELLOW: 2, RED: 3, WALK: 2}
NEXT_STATE = {GREEN: YELLOW, YELLOW: RED, RED: GREEN, WALK: GREEN}


def next_state(state, elapsed, button_waiting):
    if state == GREEN and button_waiting and elapsed >= 2:
        return YELLOW
    if elapsed < DURATIONS[state]:
        return state
    if state == RED and button_waiting:
        return WALK
    return NEXT_STATE[state]


def run_controller(total_ticks, presses):
    state = GREEN
    elapsed = 0
    button = False
    changes = []
    tick = 0
    while True:
        if tick >= total_ticks:
            break
        tick += 1
        if tick in presses:
            button = True
        new_state = next_state(state, elapsed + 1, button)
        if new_state == state:
            elapsed += 1
            continue
        if new_state == WALK:
            button = False
        changes.append((tick, state, new_state))
        state, elapsed = new_state, 0
    return state, changes
