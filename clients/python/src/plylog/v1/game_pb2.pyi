import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ChessVariant(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHESS_VARIANT_UNSPECIFIED: _ClassVar[ChessVariant]
    CHESS_VARIANT_STANDARD: _ClassVar[ChessVariant]
    CHESS_VARIANT_CHESS960: _ClassVar[ChessVariant]

class DrawRule(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DRAW_RULE_UNSPECIFIED: _ClassVar[DrawRule]
    DRAW_RULE_CLAIMED: _ClassVar[DrawRule]
    DRAW_RULE_AUTOMATIC: _ClassVar[DrawRule]

class PopBothLines(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    POP_BOTH_LINES_UNSPECIFIED: _ClassVar[PopBothLines]
    POP_BOTH_LINES_MOVER_WINS: _ClassVar[PopBothLines]
    POP_BOTH_LINES_OPPONENT_WINS: _ClassVar[PopBothLines]

class Overshoot(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OVERSHOOT_UNSPECIFIED: _ClassVar[Overshoot]
    OVERSHOOT_EXACT_LANDING: _ClassVar[Overshoot]
    OVERSHOOT_BOUNCE_BACK: _ClassVar[Overshoot]
    OVERSHOOT_REACH_OR_PASS: _ClassVar[Overshoot]

class UndoPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    UNDO_POLICY_UNSPECIFIED: _ClassVar[UndoPolicy]
    UNDO_POLICY_LAST_MOVER: _ClassVar[UndoPolicy]
    UNDO_POLICY_ANY_SEAT: _ClassVar[UndoPolicy]
    UNDO_POLICY_DISABLED: _ClassVar[UndoPolicy]
    UNDO_POLICY_CONSENT: _ClassVar[UndoPolicy]

class AbsenceAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ABSENCE_ACTION_UNSPECIFIED: _ClassVar[AbsenceAction]
    ABSENCE_ACTION_EXPIRE: _ClassVar[AbsenceAction]
    ABSENCE_ACTION_OFFER_DRAW: _ClassVar[AbsenceAction]

class ExpiryPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXPIRY_POLICY_UNSPECIFIED: _ClassVar[ExpiryPolicy]
    EXPIRY_POLICY_FORFEIT: _ClassVar[ExpiryPolicy]
    EXPIRY_POLICY_RANDOM_MOVE: _ClassVar[ExpiryPolicy]
    EXPIRY_POLICY_DRAW: _ClassVar[ExpiryPolicy]

class OverlineRule(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OVERLINE_RULE_UNSPECIFIED: _ClassVar[OverlineRule]
    OVERLINE_RULE_FREESTYLE: _ClassVar[OverlineRule]
    OVERLINE_RULE_EXACT: _ClassVar[OverlineRule]

class Engine(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ENGINE_UNSPECIFIED: _ClassVar[Engine]
    ENGINE_RANDOM: _ClassVar[Engine]
    ENGINE_MINIMAX: _ClassVar[Engine]
    ENGINE_CONNECT4: _ClassVar[Engine]
    ENGINE_MCTS: _ClassVar[Engine]

class EndReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    END_REASON_UNSPECIFIED: _ClassVar[EndReason]
    END_REASON_LINE_COMPLETED: _ClassVar[EndReason]
    END_REASON_BOARD_FULL: _ClassVar[EndReason]
    END_REASON_REPETITION: _ClassVar[EndReason]
    END_REASON_DISC_COUNT: _ClassVar[EndReason]
    END_REASON_RACE_FINISHED: _ClassVar[EndReason]
    END_REASON_CONNECTION: _ClassVar[EndReason]
    END_REASON_RESIGNATION: _ClassVar[EndReason]
    END_REASON_TIMEOUT: _ClassVar[EndReason]
    END_REASON_AGREEMENT: _ClassVar[EndReason]
    END_REASON_ABORTED: _ClassVar[EndReason]
    END_REASON_ABANDONED: _ClassVar[EndReason]
    END_REASON_CHECKMATE: _ClassVar[EndReason]
    END_REASON_STALEMATE: _ClassVar[EndReason]
    END_REASON_INSUFFICIENT_MATERIAL: _ClassVar[EndReason]
    END_REASON_THREEFOLD_REPETITION: _ClassVar[EndReason]
    END_REASON_FIFTY_MOVES: _ClassVar[EndReason]
    END_REASON_FIVEFOLD_REPETITION: _ClassVar[EndReason]
    END_REASON_SEVENTY_FIVE_MOVES: _ClassVar[EndReason]

class GameStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_STATUS_UNSPECIFIED: _ClassVar[GameStatus]
    GAME_STATUS_IN_PROGRESS: _ClassVar[GameStatus]
    GAME_STATUS_WON: _ClassVar[GameStatus]
    GAME_STATUS_DRAWN: _ClassVar[GameStatus]
    GAME_STATUS_NO_RESULT: _ClassVar[GameStatus]

class ChessSide(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHESS_SIDE_UNSPECIFIED: _ClassVar[ChessSide]
    CHESS_SIDE_WHITE: _ClassVar[ChessSide]
    CHESS_SIDE_BLACK: _ClassVar[ChessSide]

class ChessPieceKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHESS_PIECE_KIND_UNSPECIFIED: _ClassVar[ChessPieceKind]
    CHESS_PIECE_KIND_PAWN: _ClassVar[ChessPieceKind]
    CHESS_PIECE_KIND_KNIGHT: _ClassVar[ChessPieceKind]
    CHESS_PIECE_KIND_BISHOP: _ClassVar[ChessPieceKind]
    CHESS_PIECE_KIND_ROOK: _ClassVar[ChessPieceKind]
    CHESS_PIECE_KIND_QUEEN: _ClassVar[ChessPieceKind]
    CHESS_PIECE_KIND_KING: _ClassVar[ChessPieceKind]

class Forfeit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FORFEIT_UNSPECIFIED: _ClassVar[Forfeit]
    FORFEIT_OVERSHOOT: _ClassVar[Forfeit]
    FORFEIT_THIRD_SIX: _ClassVar[Forfeit]
CHESS_VARIANT_UNSPECIFIED: ChessVariant
CHESS_VARIANT_STANDARD: ChessVariant
CHESS_VARIANT_CHESS960: ChessVariant
DRAW_RULE_UNSPECIFIED: DrawRule
DRAW_RULE_CLAIMED: DrawRule
DRAW_RULE_AUTOMATIC: DrawRule
POP_BOTH_LINES_UNSPECIFIED: PopBothLines
POP_BOTH_LINES_MOVER_WINS: PopBothLines
POP_BOTH_LINES_OPPONENT_WINS: PopBothLines
OVERSHOOT_UNSPECIFIED: Overshoot
OVERSHOOT_EXACT_LANDING: Overshoot
OVERSHOOT_BOUNCE_BACK: Overshoot
OVERSHOOT_REACH_OR_PASS: Overshoot
UNDO_POLICY_UNSPECIFIED: UndoPolicy
UNDO_POLICY_LAST_MOVER: UndoPolicy
UNDO_POLICY_ANY_SEAT: UndoPolicy
UNDO_POLICY_DISABLED: UndoPolicy
UNDO_POLICY_CONSENT: UndoPolicy
ABSENCE_ACTION_UNSPECIFIED: AbsenceAction
ABSENCE_ACTION_EXPIRE: AbsenceAction
ABSENCE_ACTION_OFFER_DRAW: AbsenceAction
EXPIRY_POLICY_UNSPECIFIED: ExpiryPolicy
EXPIRY_POLICY_FORFEIT: ExpiryPolicy
EXPIRY_POLICY_RANDOM_MOVE: ExpiryPolicy
EXPIRY_POLICY_DRAW: ExpiryPolicy
OVERLINE_RULE_UNSPECIFIED: OverlineRule
OVERLINE_RULE_FREESTYLE: OverlineRule
OVERLINE_RULE_EXACT: OverlineRule
ENGINE_UNSPECIFIED: Engine
ENGINE_RANDOM: Engine
ENGINE_MINIMAX: Engine
ENGINE_CONNECT4: Engine
ENGINE_MCTS: Engine
END_REASON_UNSPECIFIED: EndReason
END_REASON_LINE_COMPLETED: EndReason
END_REASON_BOARD_FULL: EndReason
END_REASON_REPETITION: EndReason
END_REASON_DISC_COUNT: EndReason
END_REASON_RACE_FINISHED: EndReason
END_REASON_CONNECTION: EndReason
END_REASON_RESIGNATION: EndReason
END_REASON_TIMEOUT: EndReason
END_REASON_AGREEMENT: EndReason
END_REASON_ABORTED: EndReason
END_REASON_ABANDONED: EndReason
END_REASON_CHECKMATE: EndReason
END_REASON_STALEMATE: EndReason
END_REASON_INSUFFICIENT_MATERIAL: EndReason
END_REASON_THREEFOLD_REPETITION: EndReason
END_REASON_FIFTY_MOVES: EndReason
END_REASON_FIVEFOLD_REPETITION: EndReason
END_REASON_SEVENTY_FIVE_MOVES: EndReason
GAME_STATUS_UNSPECIFIED: GameStatus
GAME_STATUS_IN_PROGRESS: GameStatus
GAME_STATUS_WON: GameStatus
GAME_STATUS_DRAWN: GameStatus
GAME_STATUS_NO_RESULT: GameStatus
CHESS_SIDE_UNSPECIFIED: ChessSide
CHESS_SIDE_WHITE: ChessSide
CHESS_SIDE_BLACK: ChessSide
CHESS_PIECE_KIND_UNSPECIFIED: ChessPieceKind
CHESS_PIECE_KIND_PAWN: ChessPieceKind
CHESS_PIECE_KIND_KNIGHT: ChessPieceKind
CHESS_PIECE_KIND_BISHOP: ChessPieceKind
CHESS_PIECE_KIND_ROOK: ChessPieceKind
CHESS_PIECE_KIND_QUEEN: ChessPieceKind
CHESS_PIECE_KIND_KING: ChessPieceKind
FORFEIT_UNSPECIFIED: Forfeit
FORFEIT_OVERSHOOT: Forfeit
FORFEIT_THIRD_SIX: Forfeit

class RuleSet(_message.Message):
    __slots__ = ("mnk", "connect_four", "gomoku", "wild", "othello", "snakes_ladders", "hex", "chess")
    MNK_FIELD_NUMBER: _ClassVar[int]
    CONNECT_FOUR_FIELD_NUMBER: _ClassVar[int]
    GOMOKU_FIELD_NUMBER: _ClassVar[int]
    WILD_FIELD_NUMBER: _ClassVar[int]
    OTHELLO_FIELD_NUMBER: _ClassVar[int]
    SNAKES_LADDERS_FIELD_NUMBER: _ClassVar[int]
    HEX_FIELD_NUMBER: _ClassVar[int]
    CHESS_FIELD_NUMBER: _ClassVar[int]
    mnk: MnkRules
    connect_four: ConnectFourRules
    gomoku: GomokuRules
    wild: WildRules
    othello: OthelloRules
    snakes_ladders: SnakesLaddersRules
    hex: HexRules
    chess: ChessRules
    def __init__(self, mnk: _Optional[_Union[MnkRules, _Mapping]] = ..., connect_four: _Optional[_Union[ConnectFourRules, _Mapping]] = ..., gomoku: _Optional[_Union[GomokuRules, _Mapping]] = ..., wild: _Optional[_Union[WildRules, _Mapping]] = ..., othello: _Optional[_Union[OthelloRules, _Mapping]] = ..., snakes_ladders: _Optional[_Union[SnakesLaddersRules, _Mapping]] = ..., hex: _Optional[_Union[HexRules, _Mapping]] = ..., chess: _Optional[_Union[ChessRules, _Mapping]] = ...) -> None: ...

class ChessRules(_message.Message):
    __slots__ = ("variant", "fen", "chess960_start", "draw_rule")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    FEN_FIELD_NUMBER: _ClassVar[int]
    CHESS960_START_FIELD_NUMBER: _ClassVar[int]
    DRAW_RULE_FIELD_NUMBER: _ClassVar[int]
    variant: ChessVariant
    fen: str
    chess960_start: int
    draw_rule: DrawRule
    def __init__(self, variant: _Optional[_Union[ChessVariant, str]] = ..., fen: _Optional[str] = ..., chess960_start: _Optional[int] = ..., draw_rule: _Optional[_Union[DrawRule, str]] = ...) -> None: ...

class MnkRules(_message.Message):
    __slots__ = ("rows", "cols", "k")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLS_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    rows: int
    cols: int
    k: int
    def __init__(self, rows: _Optional[int] = ..., cols: _Optional[int] = ..., k: _Optional[int] = ...) -> None: ...

class ConnectFourRules(_message.Message):
    __slots__ = ("rows", "cols", "k", "pop_out", "pop_both_lines")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLS_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    POP_OUT_FIELD_NUMBER: _ClassVar[int]
    POP_BOTH_LINES_FIELD_NUMBER: _ClassVar[int]
    rows: int
    cols: int
    k: int
    pop_out: bool
    pop_both_lines: PopBothLines
    def __init__(self, rows: _Optional[int] = ..., cols: _Optional[int] = ..., k: _Optional[int] = ..., pop_out: _Optional[bool] = ..., pop_both_lines: _Optional[_Union[PopBothLines, str]] = ...) -> None: ...

class GomokuRules(_message.Message):
    __slots__ = ("rows", "cols", "k", "overline")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLS_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    OVERLINE_FIELD_NUMBER: _ClassVar[int]
    rows: int
    cols: int
    k: int
    overline: OverlineRule
    def __init__(self, rows: _Optional[int] = ..., cols: _Optional[int] = ..., k: _Optional[int] = ..., overline: _Optional[_Union[OverlineRule, str]] = ...) -> None: ...

class WildRules(_message.Message):
    __slots__ = ("rows", "cols", "k")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLS_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    rows: int
    cols: int
    k: int
    def __init__(self, rows: _Optional[int] = ..., cols: _Optional[int] = ..., k: _Optional[int] = ...) -> None: ...

class OthelloRules(_message.Message):
    __slots__ = ("size",)
    SIZE_FIELD_NUMBER: _ClassVar[int]
    size: int
    def __init__(self, size: _Optional[int] = ...) -> None: ...

class HexRules(_message.Message):
    __slots__ = ("size", "swap")
    SIZE_FIELD_NUMBER: _ClassVar[int]
    SWAP_FIELD_NUMBER: _ClassVar[int]
    size: int
    swap: bool
    def __init__(self, size: _Optional[int] = ..., swap: _Optional[bool] = ...) -> None: ...

class SnakesLaddersRules(_message.Message):
    __slots__ = ("squares", "jumps", "chaining", "overshoot", "dice", "sides", "extra_turn_on_six", "three_sixes_forfeit", "seed")
    SQUARES_FIELD_NUMBER: _ClassVar[int]
    JUMPS_FIELD_NUMBER: _ClassVar[int]
    CHAINING_FIELD_NUMBER: _ClassVar[int]
    OVERSHOOT_FIELD_NUMBER: _ClassVar[int]
    DICE_FIELD_NUMBER: _ClassVar[int]
    SIDES_FIELD_NUMBER: _ClassVar[int]
    EXTRA_TURN_ON_SIX_FIELD_NUMBER: _ClassVar[int]
    THREE_SIXES_FORFEIT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    squares: int
    jumps: _containers.RepeatedCompositeFieldContainer[Jump]
    chaining: bool
    overshoot: Overshoot
    dice: int
    sides: int
    extra_turn_on_six: bool
    three_sixes_forfeit: bool
    seed: int
    def __init__(self, squares: _Optional[int] = ..., jumps: _Optional[_Iterable[_Union[Jump, _Mapping]]] = ..., chaining: _Optional[bool] = ..., overshoot: _Optional[_Union[Overshoot, str]] = ..., dice: _Optional[int] = ..., sides: _Optional[int] = ..., extra_turn_on_six: _Optional[bool] = ..., three_sixes_forfeit: _Optional[bool] = ..., seed: _Optional[int] = ...) -> None: ...

class Jump(_message.Message):
    __slots__ = ("to",)
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    to: int
    def __init__(self, to: _Optional[int] = ..., **kwargs) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("per_move", "initial", "increment", "on_expiry", "seed")
    PER_MOVE_FIELD_NUMBER: _ClassVar[int]
    INITIAL_FIELD_NUMBER: _ClassVar[int]
    INCREMENT_FIELD_NUMBER: _ClassVar[int]
    ON_EXPIRY_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    per_move: _duration_pb2.Duration
    initial: _duration_pb2.Duration
    increment: _duration_pb2.Duration
    on_expiry: ExpiryPolicy
    seed: int
    def __init__(self, per_move: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., initial: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., increment: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., on_expiry: _Optional[_Union[ExpiryPolicy, str]] = ..., seed: _Optional[int] = ...) -> None: ...

class AbsencePolicy(_message.Message):
    __slots__ = ("grace", "on_absence")
    GRACE_FIELD_NUMBER: _ClassVar[int]
    ON_ABSENCE_FIELD_NUMBER: _ClassVar[int]
    grace: _duration_pb2.Duration
    on_absence: AbsenceAction
    def __init__(self, grace: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., on_absence: _Optional[_Union[AbsenceAction, str]] = ...) -> None: ...

class Seat(_message.Message):
    __slots__ = ("player_id", "display_name", "symbol", "bot")
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    player_id: str
    display_name: str
    symbol: str
    bot: Bot
    def __init__(self, player_id: _Optional[str] = ..., display_name: _Optional[str] = ..., symbol: _Optional[str] = ..., bot: _Optional[_Union[Bot, _Mapping]] = ...) -> None: ...

class Bot(_message.Message):
    __slots__ = ("engine", "strength", "seed")
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    engine: Engine
    strength: int
    seed: int
    def __init__(self, engine: _Optional[_Union[Engine, str]] = ..., strength: _Optional[int] = ..., seed: _Optional[int] = ...) -> None: ...

class Chooser(_message.Message):
    __slots__ = ("engine", "strength", "proven")
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    PROVEN_FIELD_NUMBER: _ClassVar[int]
    engine: Engine
    strength: int
    proven: bool
    def __init__(self, engine: _Optional[_Union[Engine, str]] = ..., strength: _Optional[int] = ..., proven: _Optional[bool] = ...) -> None: ...

class Score(_message.Message):
    __slots__ = ("exact", "heuristic", "win_rate_per_mille")
    EXACT_FIELD_NUMBER: _ClassVar[int]
    HEURISTIC_FIELD_NUMBER: _ClassVar[int]
    WIN_RATE_PER_MILLE_FIELD_NUMBER: _ClassVar[int]
    exact: int
    heuristic: int
    win_rate_per_mille: int
    def __init__(self, exact: _Optional[int] = ..., heuristic: _Optional[int] = ..., win_rate_per_mille: _Optional[int] = ...) -> None: ...

class Cell(_message.Message):
    __slots__ = ("row", "col")
    ROW_FIELD_NUMBER: _ClassVar[int]
    COL_FIELD_NUMBER: _ClassVar[int]
    row: int
    col: int
    def __init__(self, row: _Optional[int] = ..., col: _Optional[int] = ...) -> None: ...

class Move(_message.Message):
    __slots__ = ("place", "drop", "pop", "roll", "swap", "chess")
    PLACE_FIELD_NUMBER: _ClassVar[int]
    DROP_FIELD_NUMBER: _ClassVar[int]
    POP_FIELD_NUMBER: _ClassVar[int]
    ROLL_FIELD_NUMBER: _ClassVar[int]
    SWAP_FIELD_NUMBER: _ClassVar[int]
    CHESS_FIELD_NUMBER: _ClassVar[int]
    place: Place
    drop: Drop
    pop: Pop
    roll: RollDice
    swap: Swap
    chess: ChessMove
    def __init__(self, place: _Optional[_Union[Place, _Mapping]] = ..., drop: _Optional[_Union[Drop, _Mapping]] = ..., pop: _Optional[_Union[Pop, _Mapping]] = ..., roll: _Optional[_Union[RollDice, _Mapping]] = ..., swap: _Optional[_Union[Swap, _Mapping]] = ..., chess: _Optional[_Union[ChessMove, _Mapping]] = ...) -> None: ...

class ChessMove(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class Swap(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RollDice(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Pop(_message.Message):
    __slots__ = ("column",)
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    column: int
    def __init__(self, column: _Optional[int] = ...) -> None: ...

class Place(_message.Message):
    __slots__ = ("row", "col", "mark")
    ROW_FIELD_NUMBER: _ClassVar[int]
    COL_FIELD_NUMBER: _ClassVar[int]
    MARK_FIELD_NUMBER: _ClassVar[int]
    row: int
    col: int
    mark: int
    def __init__(self, row: _Optional[int] = ..., col: _Optional[int] = ..., mark: _Optional[int] = ...) -> None: ...

class Drop(_message.Message):
    __slots__ = ("column",)
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    column: int
    def __init__(self, column: _Optional[int] = ...) -> None: ...

class Outcome(_message.Message):
    __slots__ = ("win", "draw", "no_result", "reason")
    WIN_FIELD_NUMBER: _ClassVar[int]
    DRAW_FIELD_NUMBER: _ClassVar[int]
    NO_RESULT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    win: Win
    draw: Draw
    no_result: NoResult
    reason: EndReason
    def __init__(self, win: _Optional[_Union[Win, _Mapping]] = ..., draw: _Optional[_Union[Draw, _Mapping]] = ..., no_result: _Optional[_Union[NoResult, _Mapping]] = ..., reason: _Optional[_Union[EndReason, str]] = ...) -> None: ...

class NoResult(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Win(_message.Message):
    __slots__ = ("seat", "line")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    line: _containers.RepeatedCompositeFieldContainer[Cell]
    def __init__(self, seat: _Optional[int] = ..., line: _Optional[_Iterable[_Union[Cell, _Mapping]]] = ...) -> None: ...

class Draw(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Piece(_message.Message):
    __slots__ = ("row", "col", "seat")
    ROW_FIELD_NUMBER: _ClassVar[int]
    COL_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    row: int
    col: int
    seat: int
    def __init__(self, row: _Optional[int] = ..., col: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class Board(_message.Message):
    __slots__ = ("rows", "cols", "pieces", "text")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLS_FIELD_NUMBER: _ClassVar[int]
    PIECES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    rows: int
    cols: int
    pieces: _containers.RepeatedCompositeFieldContainer[Piece]
    text: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, rows: _Optional[int] = ..., cols: _Optional[int] = ..., pieces: _Optional[_Iterable[_Union[Piece, _Mapping]]] = ..., text: _Optional[_Iterable[str]] = ...) -> None: ...

class Position(_message.Message):
    __slots__ = ("sequence", "ply", "status", "seat_to_move", "outcome", "board", "squares", "clocks", "seats_out", "draw_offer", "takeback_request", "redoable", "round", "rematch", "seats_present", "chess")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    PLY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SEAT_TO_MOVE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    BOARD_FIELD_NUMBER: _ClassVar[int]
    SQUARES_FIELD_NUMBER: _ClassVar[int]
    CLOCKS_FIELD_NUMBER: _ClassVar[int]
    SEATS_OUT_FIELD_NUMBER: _ClassVar[int]
    DRAW_OFFER_FIELD_NUMBER: _ClassVar[int]
    TAKEBACK_REQUEST_FIELD_NUMBER: _ClassVar[int]
    REDOABLE_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    REMATCH_FIELD_NUMBER: _ClassVar[int]
    SEATS_PRESENT_FIELD_NUMBER: _ClassVar[int]
    CHESS_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    ply: int
    status: GameStatus
    seat_to_move: int
    outcome: Outcome
    board: Board
    squares: _containers.RepeatedScalarFieldContainer[int]
    clocks: Clocks
    seats_out: _containers.RepeatedScalarFieldContainer[int]
    draw_offer: PendingOffer
    takeback_request: PendingOffer
    redoable: int
    round: int
    rematch: RematchRequested
    seats_present: _containers.RepeatedScalarFieldContainer[int]
    chess: ChessPosition
    def __init__(self, sequence: _Optional[int] = ..., ply: _Optional[int] = ..., status: _Optional[_Union[GameStatus, str]] = ..., seat_to_move: _Optional[int] = ..., outcome: _Optional[_Union[Outcome, _Mapping]] = ..., board: _Optional[_Union[Board, _Mapping]] = ..., squares: _Optional[_Iterable[int]] = ..., clocks: _Optional[_Union[Clocks, _Mapping]] = ..., seats_out: _Optional[_Iterable[int]] = ..., draw_offer: _Optional[_Union[PendingOffer, _Mapping]] = ..., takeback_request: _Optional[_Union[PendingOffer, _Mapping]] = ..., redoable: _Optional[int] = ..., round: _Optional[int] = ..., rematch: _Optional[_Union[RematchRequested, _Mapping]] = ..., seats_present: _Optional[_Iterable[int]] = ..., chess: _Optional[_Union[ChessPosition, _Mapping]] = ...) -> None: ...

class ChessPosition(_message.Message):
    __slots__ = ("fen", "side_to_move", "castling_rights", "en_passant_square", "halfmove_clock", "fullmove_number", "in_check", "claimable_draw", "pieces", "text")
    FEN_FIELD_NUMBER: _ClassVar[int]
    SIDE_TO_MOVE_FIELD_NUMBER: _ClassVar[int]
    CASTLING_RIGHTS_FIELD_NUMBER: _ClassVar[int]
    EN_PASSANT_SQUARE_FIELD_NUMBER: _ClassVar[int]
    HALFMOVE_CLOCK_FIELD_NUMBER: _ClassVar[int]
    FULLMOVE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    IN_CHECK_FIELD_NUMBER: _ClassVar[int]
    CLAIMABLE_DRAW_FIELD_NUMBER: _ClassVar[int]
    PIECES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    fen: str
    side_to_move: ChessSide
    castling_rights: str
    en_passant_square: str
    halfmove_clock: int
    fullmove_number: int
    in_check: bool
    claimable_draw: EndReason
    pieces: _containers.RepeatedCompositeFieldContainer[ChessPiece]
    text: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, fen: _Optional[str] = ..., side_to_move: _Optional[_Union[ChessSide, str]] = ..., castling_rights: _Optional[str] = ..., en_passant_square: _Optional[str] = ..., halfmove_clock: _Optional[int] = ..., fullmove_number: _Optional[int] = ..., in_check: _Optional[bool] = ..., claimable_draw: _Optional[_Union[EndReason, str]] = ..., pieces: _Optional[_Iterable[_Union[ChessPiece, _Mapping]]] = ..., text: _Optional[_Iterable[str]] = ...) -> None: ...

class ChessPiece(_message.Message):
    __slots__ = ("square", "side", "kind")
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    SIDE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    square: str
    side: ChessSide
    kind: ChessPieceKind
    def __init__(self, square: _Optional[str] = ..., side: _Optional[_Union[ChessSide, str]] = ..., kind: _Optional[_Union[ChessPieceKind, str]] = ...) -> None: ...

class Clocks(_message.Message):
    __slots__ = ("remaining", "turn_started", "deadline")
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    TURN_STARTED_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    remaining: _containers.RepeatedCompositeFieldContainer[_duration_pb2.Duration]
    turn_started: _timestamp_pb2.Timestamp
    deadline: _timestamp_pb2.Timestamp
    def __init__(self, remaining: _Optional[_Iterable[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]]] = ..., turn_started: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PendingOffer(_message.Message):
    __slots__ = ("by", "agreed")
    BY_FIELD_NUMBER: _ClassVar[int]
    AGREED_FIELD_NUMBER: _ClassVar[int]
    by: int
    agreed: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, by: _Optional[int] = ..., agreed: _Optional[_Iterable[int]] = ...) -> None: ...

class Game(_message.Message):
    __slots__ = ("game_id", "rules", "seats", "position", "created_at", "last_sequence", "undo_policy", "time_control", "absence", "labels")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    UNDO_POLICY_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    ABSENCE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    rules: RuleSet
    seats: _containers.RepeatedCompositeFieldContainer[Seat]
    position: Position
    created_at: _timestamp_pb2.Timestamp
    last_sequence: int
    undo_policy: UndoPolicy
    time_control: TimeControl
    absence: AbsencePolicy
    labels: _containers.ScalarMap[str, str]
    def __init__(self, game_id: _Optional[str] = ..., rules: _Optional[_Union[RuleSet, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[Seat, _Mapping]]] = ..., position: _Optional[_Union[Position, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_sequence: _Optional[int] = ..., undo_policy: _Optional[_Union[UndoPolicy, str]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., absence: _Optional[_Union[AbsencePolicy, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ...) -> None: ...

class GameEvent(_message.Message):
    __slots__ = ("game_id", "sequence", "recorded_at", "round", "game_created", "move_played", "move_undone", "turn_passed", "seat_token_reissued", "move_redone", "time_expired", "seat_out", "game_ended", "draw_offered", "draw_accepted", "draw_declined", "takeback_requested", "takeback_accepted", "takeback_declined", "rematch_requested", "round_started", "seat_absent")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    GAME_CREATED_FIELD_NUMBER: _ClassVar[int]
    MOVE_PLAYED_FIELD_NUMBER: _ClassVar[int]
    MOVE_UNDONE_FIELD_NUMBER: _ClassVar[int]
    TURN_PASSED_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_REISSUED_FIELD_NUMBER: _ClassVar[int]
    MOVE_REDONE_FIELD_NUMBER: _ClassVar[int]
    TIME_EXPIRED_FIELD_NUMBER: _ClassVar[int]
    SEAT_OUT_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    DRAW_OFFERED_FIELD_NUMBER: _ClassVar[int]
    DRAW_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    DRAW_DECLINED_FIELD_NUMBER: _ClassVar[int]
    TAKEBACK_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    TAKEBACK_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    TAKEBACK_DECLINED_FIELD_NUMBER: _ClassVar[int]
    REMATCH_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    ROUND_STARTED_FIELD_NUMBER: _ClassVar[int]
    SEAT_ABSENT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    sequence: int
    recorded_at: _timestamp_pb2.Timestamp
    round: int
    game_created: GameCreated
    move_played: MovePlayed
    move_undone: MoveUndone
    turn_passed: TurnPassed
    seat_token_reissued: SeatTokenReissued
    move_redone: MovePlayed
    time_expired: TimeExpired
    seat_out: SeatOut
    game_ended: GameEnded
    draw_offered: SeatAction
    draw_accepted: SeatAction
    draw_declined: SeatAction
    takeback_requested: SeatAction
    takeback_accepted: SeatAction
    takeback_declined: SeatAction
    rematch_requested: RematchRequested
    round_started: RoundStarted
    seat_absent: SeatAbsent
    def __init__(self, game_id: _Optional[str] = ..., sequence: _Optional[int] = ..., recorded_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., round: _Optional[int] = ..., game_created: _Optional[_Union[GameCreated, _Mapping]] = ..., move_played: _Optional[_Union[MovePlayed, _Mapping]] = ..., move_undone: _Optional[_Union[MoveUndone, _Mapping]] = ..., turn_passed: _Optional[_Union[TurnPassed, _Mapping]] = ..., seat_token_reissued: _Optional[_Union[SeatTokenReissued, _Mapping]] = ..., move_redone: _Optional[_Union[MovePlayed, _Mapping]] = ..., time_expired: _Optional[_Union[TimeExpired, _Mapping]] = ..., seat_out: _Optional[_Union[SeatOut, _Mapping]] = ..., game_ended: _Optional[_Union[GameEnded, _Mapping]] = ..., draw_offered: _Optional[_Union[SeatAction, _Mapping]] = ..., draw_accepted: _Optional[_Union[SeatAction, _Mapping]] = ..., draw_declined: _Optional[_Union[SeatAction, _Mapping]] = ..., takeback_requested: _Optional[_Union[SeatAction, _Mapping]] = ..., takeback_accepted: _Optional[_Union[SeatAction, _Mapping]] = ..., takeback_declined: _Optional[_Union[SeatAction, _Mapping]] = ..., rematch_requested: _Optional[_Union[RematchRequested, _Mapping]] = ..., round_started: _Optional[_Union[RoundStarted, _Mapping]] = ..., seat_absent: _Optional[_Union[SeatAbsent, _Mapping]] = ...) -> None: ...

class SeatAbsent(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class RematchRequested(_message.Message):
    __slots__ = ("seat", "rotate")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROTATE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    rotate: bool
    def __init__(self, seat: _Optional[int] = ..., rotate: _Optional[bool] = ...) -> None: ...

class RoundStarted(_message.Message):
    __slots__ = ("round", "first")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    FIRST_FIELD_NUMBER: _ClassVar[int]
    round: int
    first: int
    def __init__(self, round: _Optional[int] = ..., first: _Optional[int] = ...) -> None: ...

class TimeExpired(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class SeatOut(_message.Message):
    __slots__ = ("seat", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    reason: EndReason
    def __init__(self, seat: _Optional[int] = ..., reason: _Optional[_Union[EndReason, str]] = ...) -> None: ...

class GameEnded(_message.Message):
    __slots__ = ("outcome",)
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    outcome: Outcome
    def __init__(self, outcome: _Optional[_Union[Outcome, _Mapping]] = ...) -> None: ...

class SeatAction(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class GameCreated(_message.Message):
    __slots__ = ("rules", "seats", "undo_policy", "time_control", "absence", "matched_at", "labels", "clocks_start_at")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    UNDO_POLICY_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    ABSENCE_FIELD_NUMBER: _ClassVar[int]
    MATCHED_AT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    CLOCKS_START_AT_FIELD_NUMBER: _ClassVar[int]
    rules: RuleSet
    seats: _containers.RepeatedCompositeFieldContainer[Seat]
    undo_policy: UndoPolicy
    time_control: TimeControl
    absence: AbsencePolicy
    matched_at: _timestamp_pb2.Timestamp
    labels: _containers.ScalarMap[str, str]
    clocks_start_at: _timestamp_pb2.Timestamp
    def __init__(self, rules: _Optional[_Union[RuleSet, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[Seat, _Mapping]]] = ..., undo_policy: _Optional[_Union[UndoPolicy, str]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., absence: _Optional[_Union[AbsencePolicy, _Mapping]] = ..., matched_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., clocks_start_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class MovePlayed(_message.Message):
    __slots__ = ("seat", "move", "placement", "ply", "outcome", "flipped", "roll", "chosen_by", "chess")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    PLY_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    FLIPPED_FIELD_NUMBER: _ClassVar[int]
    ROLL_FIELD_NUMBER: _ClassVar[int]
    CHOSEN_BY_FIELD_NUMBER: _ClassVar[int]
    CHESS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    move: Move
    placement: Cell
    ply: int
    outcome: Outcome
    flipped: _containers.RepeatedCompositeFieldContainer[Cell]
    roll: RollResult
    chosen_by: Chooser
    chess: ChessMovePlayed
    def __init__(self, seat: _Optional[int] = ..., move: _Optional[_Union[Move, _Mapping]] = ..., placement: _Optional[_Union[Cell, _Mapping]] = ..., ply: _Optional[int] = ..., outcome: _Optional[_Union[Outcome, _Mapping]] = ..., flipped: _Optional[_Iterable[_Union[Cell, _Mapping]]] = ..., roll: _Optional[_Union[RollResult, _Mapping]] = ..., chosen_by: _Optional[_Union[Chooser, _Mapping]] = ..., chess: _Optional[_Union[ChessMovePlayed, _Mapping]] = ...) -> None: ...

class ChessMovePlayed(_message.Message):
    __slots__ = ("uci", "san", "captured", "check")
    UCI_FIELD_NUMBER: _ClassVar[int]
    SAN_FIELD_NUMBER: _ClassVar[int]
    CAPTURED_FIELD_NUMBER: _ClassVar[int]
    CHECK_FIELD_NUMBER: _ClassVar[int]
    uci: str
    san: str
    captured: ChessPieceKind
    check: bool
    def __init__(self, uci: _Optional[str] = ..., san: _Optional[str] = ..., captured: _Optional[_Union[ChessPieceKind, str]] = ..., check: _Optional[bool] = ...) -> None: ...

class RollResult(_message.Message):
    __slots__ = ("dice", "passed", "jumps", "to", "sixes_before", "extra_turn", "forfeit")
    DICE_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    JUMPS_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    SIXES_BEFORE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_TURN_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_FIELD_NUMBER: _ClassVar[int]
    dice: _containers.RepeatedScalarFieldContainer[int]
    passed: _containers.RepeatedScalarFieldContainer[int]
    jumps: _containers.RepeatedCompositeFieldContainer[Jump]
    to: int
    sixes_before: int
    extra_turn: bool
    forfeit: Forfeit
    def __init__(self, dice: _Optional[_Iterable[int]] = ..., passed: _Optional[_Iterable[int]] = ..., jumps: _Optional[_Iterable[_Union[Jump, _Mapping]]] = ..., to: _Optional[int] = ..., sixes_before: _Optional[int] = ..., extra_turn: _Optional[bool] = ..., forfeit: _Optional[_Union[Forfeit, str]] = ..., **kwargs) -> None: ...

class TurnPassed(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class MoveUndone(_message.Message):
    __slots__ = ("seat", "undone_sequence", "placement", "requested_by")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    UNDONE_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    seat: int
    undone_sequence: int
    placement: Cell
    requested_by: int
    def __init__(self, seat: _Optional[int] = ..., undone_sequence: _Optional[int] = ..., placement: _Optional[_Union[Cell, _Mapping]] = ..., requested_by: _Optional[int] = ...) -> None: ...

class SeatTokenReissued(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...
