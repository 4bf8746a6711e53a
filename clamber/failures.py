"""Why a simulated robot failed a trial: one vocabulary for every robot and study."""

from __future__ import annotations

import enum


class FailureReason(enum.Enum):
    """Why a simulated robot did not do what the trial asked (one vocabulary for all
    studies; ``TrialOutcome.detail`` carries the specifics: which gripper, when)."""

    FRONT_MISSED = "front gripper missed the wall"
    REAR_MISSED = "rear gripper missed the wall"
    NOT_READY = "landed, but not ready for the next jump"
    FELL = "fell off the wall"
    GRIPPER_BROKE = "a gripper broke off"
    GRASP_MISSED = "a grasp missed its hold"
    NO_HOLD = "no reachable hold that carries the load"
    INFEASIBLE_START = "the start stance could not be placed within reach"
    GRIPPER_STUCK = "a gripper did not open"
    BODY_STRAYED = "body strayed from its reference"
    TIPPED_OVER = "robot tipped over"
    SHORT_DISTANCE = "covered less than half the planned distance"
    TIME_LIMIT = "gait did not finish in time"
    UNSTABLE = "the physics simulation went unstable"
    WORKER_LOST = "the worker process died on every attempt"
    INTERNAL_ERROR = "an internal error ended the trial (a defect; its detail names it)"
