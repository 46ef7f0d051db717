## The remote player's page (/play), in English. Every text a player reads is here:
## play.js passes amounts already written in the table's currency ($amount, $stake, $net),
## never minor units, and maps every code the players' API answers to error-CODE. A
## translation is play-LANG.ftl with the same ids (play-de.ftl); i18n.js picks it from the
## browser's languages or the page's language setting, and falls back to English per id.

## Shared with the table drawing (table.js)

dealer-label = Dealer
seat-label = Seat { $seat }
no-bet = no bet
no-bets-round = no bets this round
no-round = no round yet
hand-bust = BUST
hand-blackjack = BJ
hand-soft = soft { $total }
dealer-blackjack-no = no dealer blackjack
dealer-blackjack-yes = dealer blackjack
outcome-blackjack = blackjack
outcome-win = win
outcome-charlie = Charlie
outcome-caribbean21 = Caribbean 21
outcome-push = push
outcome-lose = lose
outcome-bust = bust
outcome-surrender = surrender
outcome-even_money = even money
outcome-cancelled = returned

## Names of the games and the side bets (the engine's ids: `game-ID`; `side-ID`, a `+`
## written `-plus-`). A variant file of the operator's own shows its own name.

game-caribbean21 = Caribbean 21
game-deluxe = Deluxe Blackjack
game-infor6 = Blackjack In for 6
game-multihand = Multi-hand Blackjack
game-ultimate = Ultimate Blackjack
side-pair = Pair
side-in_for_6 = In for 6
side-21-plus-3 = 21 + 3
side-top_21-plus-3 = Top 21 + 3
side-qq_as_lucky_ladies = Lucky Ladies QQ
side-c3 = C3
side-lucky_aces = Lucky Aces
side-lucky_ladies = Lucky Ladies
side-lucky_lucky = Lucky Lucky
side-match = Match Up
side-a_2 = A–2
side-blackjack_bonus = Blackjack Bonus
side-poker_3 = Poker 3
side-poker_3_bonus = Poker 3 Bonus
side-kk = KK
side-jj = JJ
side-qq = QQ
side-suits = Suits
side-19_plus = 19+
side-sevens = Sevens

## The winning combinations of the side bets' pay tables (the rules dialog): the
## engine's ids (`combo-ID`; a bonus class `hard_six:CLASS` written `combo-hard_six-CLASS`).
combo-suited_trips = Suited Trips
combo-perfect_pair = Perfect Pair
combo-colored_pair = Coloured Pair
combo-mixed_pair = Mixed Pair
combo-easy_six = Easy Six
combo-hard_six-exacta = Hard Six, same suit
combo-hard_six-coloured = Hard Six, same colour
combo-hard_six-mixed = Hard Six, mixed colours
combo-suited_three_of_a_kind = Suited Three of a Kind
combo-straight_flush = Straight Flush
combo-three_of_a_kind = Three of a Kind
combo-straight = Straight
combo-flush = Flush
combo-queen_of_hearts_pair_with_dealer_blackjack = Pair of Queens of Hearts with the dealer's Blackjack
combo-queen_of_hearts_pair = Pair of Queens of Hearts
combo-matched_20 = Matched 20
combo-suited_20 = Suited 20
combo-any_20 = Any 20
combo-any_19 = Any 19
combo-highest_hearts = Highest Hearts
combo-jacks_in_black = Jacks in Black
combo-triplets = Triplets
combo-red_carpet = Red Carpet
combo-four_aces = Four Aces
combo-three_suited_aces = Three Suited Aces
combo-three_aces = Three Aces
combo-two_suited_aces = Two Suited Aces
combo-two_aces = Two Aces
combo-ace_of_diamonds = Ace of Diamonds
combo-one_ace = One Ace
combo-suited_777 = Suited 7-7-7
combo-suited_678 = Suited 6-7-8
combo-777 = 7-7-7
combo-678 = 6-7-8
combo-suited_21 = Suited 21
combo-21 = Any 21
combo-two_suited_matches = Two Suited Matches
combo-suited_and_non_suited_match = Suited and Unsuited Match
combo-one_suited_match = One Suited Match
combo-two_non_suited_matches = Two Unsuited Matches
combo-one_non_suited_match = One Unsuited Match
combo-one_card_spread = One-Card Spread
combo-two_card_spread = Two-Card Spread
combo-other_spread = Any Other Spread
combo-suited_blackjack = Suited Blackjack
combo-same_colour_blackjack = Same-Colour Blackjack
combo-diamond_pair = Pair of Diamonds
combo-one_of_rank = One Card of the Bet's Rank
combo-suited_pair = Suited Pair
combo-non_suited_pair = Unsuited Pair
combo-suited_king_queen = Suited King and Queen
combo-two_suited = Two Cards of a Suit
combo-suited_77 = Suited 7-7
combo-77 = 7-7
combo-first_card_7 = First Card a 7
combo-dealer_natural = Dealer's Blackjack

## The public page (/public)

seat-bet = bet
shoe-number = shoe { $shoe }
shoe-out = out { $n }
shoe-left = left { $n }
public-connecting = connecting…
public-round = round { $round }
public-betting-open = betting open
public-under-review = under review
public-paused = paused
public-conn-live = live
public-conn-connecting = connecting…
public-conn-reconnecting = reconnecting…
public-results = Results
public-no-results = no results yet
public-cancelled = (cancelled, bets refunded)
public-dealer-total = dealer { $total }
public-provisional = provisional
public-hand = seat { $seat }{ $hand ->
    [0] {""}
   *[other] /{ $hand }
}

## Header

page-title = { $table } · { $game }
round-number = Round { $round }
balance = Balance
total-bet = Bet
session-clock = Session { $time }
menu-help = Rules
menu-history = History
menu-language = Language
menu-close = Close
seat-you = You

## Joining

join-title = Take a seat
join-none = No seat is free right now. You can wait here: seats free up between rounds.
join-seat = Seat { $seat }
join-taken = Seat { $seat }: taken
join-behind = Bet behind other players
join-table = Join the table
join-second = Take a second seat
leave = Leave
left-table = You left the table. Take a seat again whenever you like.
released-away = This page was not heard from for { $rounds ->
    [one] a whole round
   *[other] { $rounds } rounds
}.
released-revoked = The casino ended your earlier session.
released-expired = Your earlier session ran out.
released-disabled = Your account was disabled.
released-seat = { $count ->
    [0] After round { $round } your place at the table was given up
    [one] After round { $round } seat { $seats } was freed
   *[other] After round { $round } seats { $seats } were freed
}, and nothing was bet for you since. Take a seat to play again.

## Betting

bets-open = Place your bets
bets-close-in = Bets close in { $seconds } s
bets-closed = Bets closed
bets-closed-none = Bets closed — you did not bet this round.
chip-tray = Chips
chip-value = Chip { $amount }
chip-too-big = This chip is more than you can still bet ({ $amount }).
spot-main = Main bet
spot-side = { $name }
spot-behind = Behind { $seat }
spot-box = Box { $box }
spot-limits = { $min } – { $max }
spot-empty = Tap
undo = Undo
clear = Clear
repeat = Repeat { $amount }
double-bets = Double
place-bet = Bet { $amount }
place-behind = Bet behind seat { $seat }: { $amount }
place-boxes = Bet { $amount }
withdraw = Withdraw bet
bet-accepted = Bet accepted: { $amount }
bet-accepted-rebet = Bet accepted: { $amount } (your last bet again)
bet-accepted-clipped = Bet accepted: { $amount } (your last bet, cut to your balance)
bet-none = Pick a chip, tap a spot, then tap Bet.
bet-unplaced = Not placed yet: tap “{ $button }” to place it.
bet-over-balance = That would be more than your balance ({ $balance }).
bet-over-max = The most on { $line } is { $max }.
bet-under-min = The least on { $line } is { $min }.
follow-double = Follow doubles
follows-double = follows doubles
follow-split = Follow splits
special-pick = Special bet
let-it-play = Let it play { $amount }
second-seat-note = On two seats your bet goes on both (mirrored, or split evenly when your balance is short).
my-seats = Seat { $seat }: { $amount }

## Deciding

your-turn = Your turn · seat { $seat }
your-turn-hand = Your turn · seat { $seat }, hand { $hand }
your-box = Box { $box }{ $hand ->
    [0] {""}
   *[other] , hand { $hand }
}
insurance-question = Dealer shows an ace: insurance?
insurance-behind = Behind seat { $seat }: insurance?
decide-in = { $seconds } s to decide
waiting-insurance-others = Other players are answering insurance…
action-hit = Hit
action-stand = Stand
action-double = Double
action-split = Split
action-surrender = Surrender
action-insurance = Insurance
action-no_insurance = No insurance
action-even_money = Even money
timer-left = { $seconds } seconds left
timeout-stood = Time's up — stood on { $total } for you.
timeout-auto = Time's up — played for you: { $actions }, then stood on { $total }.
timeout-insurance = Time's up — insurance declined for you.
timeout-hit = hit
round-in-play = Round in play — the dealer deals.
round-wait-others = Other players are deciding…
next-round = Waiting for the next round…

## Results

result-title = Round { $round }
result-win = You win { $amount }
result-lose = You lose { $amount }
result-even = Your stake back
result-line = { $line }: { $net }
line-main = Main
line-insurance = Insurance
line-seat = Seat { $seat }
line-behind = Behind { $seat }
line-box = Box { $box }
result-cancelled = Round { $round } was cancelled: every bet was returned ({ $amount } back to you).
result-corrected = Round { $round } was corrected by a supervisor: your result changed from { $before } to { $after }, so your balance changes by { $delta }.
result-pending = { $amount } will reach your balance once the result is final — in a few seconds, after the time allowed for disputes.
net-plus = +{ $amount }
net-minus = −{ $amount }
net-zero = { $amount }

## History

history-title = Your last rounds
history-empty = No rounds played yet at this table.
history-round = Round { $round }
history-stake = Stake
history-return = Return
history-net = Net
history-cancelled = cancelled · bets returned
history-open = in play
history-signed = signed by the table

## Help

help-title = How to play { $game }
help-basics = The dealer's hand against yours: closer to 21 without going over wins. Cards 2–10 count their value, J, Q and K count 10, an ace 1 or 11.
help-decks = { $decks ->
    [one] One deck
   *[other] { $decks } decks
}{ $fresh ->
    [yes] , shuffled every round.
   *[no] {"."}
}
help-dealer-s17 = The dealer stands on all 17s.
help-dealer-h17 = The dealer hits soft 17.
help-blackjack = Blackjack pays { $pays }.
help-double = Double: { $on }{ $after_split ->
    [yes] , also after a split.
   *[no] {"."}
}
help-double-any_two = on any first two cards
help-double-nine_to_eleven = on a first two cards' total of 9, 10 or 11
help-double-ten_or_eleven = on a first two cards' total of 10 or 11
help-double-any_cards = on any number of cards
help-surrender-never = not offered
help-surrender-first_two_cards = on your first two cards, after the dealer checks for blackjack
help-surrender-any_time = at any time during your hand
help-ties-push = your stake comes back
help-ties-lose = the dealer wins
help-split = Split pairs into up to { $hands } hands.
help-surrender = Surrender: { $when }.
help-insurance = Insurance against a dealer ace costs { $cost } of the bet and pays { $pays }{ $even ->
    [yes] ; even money is offered on a blackjack.
   *[no] {"."}
}
help-insurance-none = No insurance.
help-ties = Ties: { $ties }.
help-limits = Bets from { $min } to { $max }.
help-timer = You have { $seconds } s for each decision; if the time runs out the table plays your hand by the rule below.
help-timeout-stand = On time-out your hand stands.
help-timeout-auto = On time-out the table plays your hand for you: hit while 11 or less, then stand.
help-side-title = { $name } · return to player { $rtp }
help-side-limits = Bets from { $min } to { $max }.
help-paytable-line = { $combination }
help-paytable-pays = pays { $pay }
help-paytable-pays-kept = pays { $pay }; the stake is kept
help-rtp-insurance = Insurance · return to player { $rtp }
help-loading = Loading the rules…
help-unpriced = The pay table's return could not be computed.

## States

state-paused-title = Table paused
state-paused = The table is paused while the staff check something. Your bets are safe; play resumes here by itself.
state-disputed-title = Round under review
state-disputed = A supervisor is reviewing this round. Your bets are safe; you will see here what they decide.
state-broken-title = Table out of service
state-broken = The table is out of service. Your bets are safe and will be settled or returned.
state-closed-title = Table closed
state-closed = Remote play is closed at this table. Your balance is safe; come back when it reopens.
state-expired-title = Session ended
state-expired = Your session has ended. Open the game again from the casino to keep playing.
state-lost-title = Connection lost
state-lost = Reconnecting… (attempt { $attempt }). Your bets are safe: whatever the table does meanwhile follows its rules and shows here once you are back.
state-lost-balance = Your balance will show again once connected.
state-no-token = Open the game from the casino to play.
state-connecting = Connecting…

## Reality check

reality-title = Reality check
reality-body = You have played for { $minutes ->
    [one] one minute
   *[other] { $minutes } minutes
}. Your net result this session: { $net }.
reality-continue = Keep playing
reality-leave = Leave

## Errors (every code the players' API answers)

error-network = No connection to the table. Retrying…
error-unknown = That did not work. Please try again.
error-malformed = That did not work. Reload the page and try again.
error-unauthenticated = Your session has ended. Open the game again from the casino.
error-no_remote_play = Remote play is closed at this table.
error-insufficient_funds = Not enough balance for that: your balance is { $balance }.
error-wallet_conflict = Your wallet is busy with another request. Try again in a moment.
error-wallet_rolled_back = Your wallet undid that bet, so it was not placed. Try again.
error-wallet_unavailable = Your wallet is not answering. Your bet was not placed; try again in a moment.
error-unknown_player = The casino does not know your account here. Open the game again from the casino.
error-player_disabled = Your account is blocked from play. Contact the casino.
error-invalid_player = Your account cannot play here. Contact the casino.
error-unavailable = The table could not do that just now. Try again.
error-betting_closed = Too late: bets are closed for this round.
error-not_taking_bets = The table is not taking bets right now.
error-invalid_bet = That bet is not allowed here: bets are { $min } to { $max }{ $side ->
    [yes] , side bets only with a main bet and within their own limits
   *[no] {""}
}.
error-unknown_side_bet = That side bet is not offered at this table.
error-decision_closed = Too late: the time for that decision ran out.
error-action_not_allowed = That move is not allowed for this hand now.
error-not_your_turn = It is not your turn.
error-no_seat = Take a seat first.
error-no_seats = This game has no seats: join the table and bet on the boxes.
error-seat_unavailable = That seat is not open to remote players.
error-seat_taken = Someone just took that seat. Pick another.
error-already_seated = You already hold all the seats this game allows.
error-seat_in_play = You have a bet in play: you can leave after the round.
error-seat_empty = Nobody bet on that seat this round, so you cannot bet behind it.
error-own_seat = You cannot bet behind your own seat.
error-not_your_seat = That seat is not yours.
error-no_play_behind = This game has no betting behind.
error-follow_unavailable = Following that player's doubles or splits is not possible here.
error-not_common_draw = This game has no boxes.
error-common_draw = This game is played on boxes: join the table and bet on them.
error-json_required = That did not work. Reload the page and try again.
error-forbidden = That is not open to players.
error-busy = The table is very busy. Trying again…
error-box_out_of_range = There is no such box.
error-no_let_it_play = This game has no "Let it play".
error-let_it_play_no_win = "Let it play" needs a win on that box in the last round.
error-let_it_play_over_limit = That win is above the "Let it play" limit.
error-locked = The table is paused: try again when play resumes.
error-disputed = The round is under review: try again when play resumes.
error-round_provisional = The last round is still being confirmed: try again in a few seconds.
error-out_of_service = The table is out of service.
error-stopped = The table is closed.
error-card_not_expected = The table was not ready for that. Try again.
error-impossible_card = The table was not ready for that. Try again.
error-burn_incomplete = The dealer is still burning cards: try again in a moment.
error-shoe_finished = The dealer is changing the shoe: try again in a moment.
## What the page checks itself (trust.js; `trust-CODE`, the same words as its English)
trust-seal-sealed = hole card sealed · { $commitment }
trust-seal-verified = ✓ hole card seal verified
trust-seal-corrected = ✓ hole card seal verified · a supervisor corrected the card from { $from } to { $to }
trust-seal-mismatch = ⚠ SEAL MISMATCH
trust-seal-checking = checking the seal…
trust-seal-unchecked = seal not checked (this page needs HTTPS)
trust-seal-title = commitment { $commitment }
trust-sig-verified = ✓ signed
trust-sig-invalid = ⚠ BAD SIGNATURE
trust-sig-unsigned = ⚠ unsigned
trust-alarm-title = ⚠ Verification failed:
trust-timeline-title = Table history restored:
trust-key-changed = the table key changed
trust-commitment-changed = round { $round }: the hole card's commitment changed
trust-timeline-back = the table's timeline went back
trust-restored = the table's history was restored or continued at its row { $row }: rounds after it are played again, and checked anew
trust-failed = verification failed: { $error }
trust-missing-result = round { $round }: no result was published
trust-missing-results = rounds { $from }–{ $to }: no result was published
trust-revealed-mismatch = round { $round }: the revealed hole card { $card } does not match its seal
trust-unsigned = round { $round }: the result is not signed
trust-bad-signature = round { $round }: the result's signature does not verify
trust-no-seal = round { $round }: the hole card was committed, and the signed result opens no seal
trust-signed-mismatch = round { $round }: the signed hole card does not match its seal

## Said to screen readers (the live regions): cards, totals, results, halts

card-name = { $rank ->
    [ace] ace
    [king] king
    [queen] queen
    [jack] jack
   *[number] { $number }
} of { $suit ->
    [spades] spades
    [hearts] hearts
    [diamonds] diamonds
   *[clubs] clubs
}
card-face-down = face-down card
say-total = { $kind ->
    [blackjack] blackjack
    [bust] { $total }, bust
    [soft] soft { $total }
   *[hard] { $total }
}
say-hand = { $who }: { $cards }
say-seat-hand = Seat { $seat }, hand { $hand }
say-result = Round { $round }: { $result }
say-halt = { $title }. { $text }
say-resumed = Play resumes.
dock-label = Your play
mute = Mute
mute-label = Mute sounds and vibration

## The relay's lobby (the page `/` of `croupier relay`)

lobby-title = croupier · live tables
lobby-heading = Tables
lobby-col-table = Table
lobby-col-game = Game
lobby-col-limits = Bets
lobby-col-seats = Free seats
lobby-col-state = State
lobby-col-round = Round
lobby-col-news = Last news
lobby-none = No table is publishing to this relay yet.
lobby-state-open = Open
lobby-state-locked = Paused (the dealer is fixing a card)
lobby-state-disputed = Paused (a result is being checked)
lobby-state-broken = Out of service
lobby-state-quiet = No news — not live
lobby-ago-now = just now
lobby-ago-s = { $n } s ago
lobby-ago-min = { $n } min ago
lobby-ago-h = { $n } h ago
lobby-side-bets = { $main } · side bets { $side }
lobby-seats-free = { $free } of { $seats }
lobby-seats-common = no seat needed
lobby-error = The relay did not answer ({ $error }); trying again.

language-en = English
language-de = Deutsch
language-fr = Français
