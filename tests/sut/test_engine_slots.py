"""The OpenAI engine's concurrency slots: tried synchronously on the issue path, awaited when full."""

from __future__ import annotations

import asyncio

from loadgen_sut.engines.openai_http import Slots


def test_slots_hand_over_in_order_and_survive_cancelled_waiters() -> None:
    async def scenario() -> list[str]:
        slots = Slots(2)
        order: list[str] = []
        assert slots.try_acquire() and slots.try_acquire()
        assert not slots.try_acquire()  # full

        async def waiter(name: str) -> None:
            await slots.acquire()
            order.append(name)

        first = asyncio.create_task(waiter("first"))
        cancelled = asyncio.create_task(waiter("cancelled"))
        last = asyncio.create_task(waiter("last"))
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.sleep(0)
        assert not slots.try_acquire()  # waiters queue ahead of a new synchronous try
        slots.release()  # -> first
        slots.release()  # the cancelled waiter is skipped -> last
        await asyncio.gather(first, last)
        assert cancelled.cancelled()
        assert slots.free == 0
        slots.release()
        slots.release()
        assert slots.free == 2
        return order

    assert asyncio.run(scenario()) == ["first", "last"]


def test_a_slot_handed_to_a_waiter_cancelled_meanwhile_is_passed_on() -> None:
    async def scenario() -> int:
        slots = Slots(1)
        assert slots.try_acquire()
        task = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0)
        slots.release()  # handed to the task's future ...
        task.cancel()  # ... but the task is cancelled before it resumes
        await asyncio.gather(task, return_exceptions=True)
        return slots.free

    assert asyncio.run(scenario()) == 1
