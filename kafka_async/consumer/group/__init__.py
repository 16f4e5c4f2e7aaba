"""Consumer group membership: state machine, coordinator loop, assignors."""
