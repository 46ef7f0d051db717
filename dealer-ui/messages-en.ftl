## The staff's and players' pages' words, in English. One catalogue: the dealer panel
## (panel.js, dispute.js) reads it now, the player's page (play.js) will. Every text a
## person reads is here; codes the server answers with (error-CODE), alarms (alarm-KIND),
## what the table waits for (expect-KIND) and dispute resolutions (op-NAME) map to plain
## language with what to do. A translation is a messages-LANG.ftl with the same ids
## (i18n.js picks it from the browser's language; a missing id falls back to English).

## Header and connection

# After the table's name, its game by the game's name (`game-ID`, read from play-en.ftl:
# the names of the games and the side bets have one home, the player's catalogue).
panel-game = · { $game }
round-number = Round { $round }
conn-live = live
conn-connecting = connecting…
conn-reconnecting = reconnecting…
user-role = { $name } · { $role ->
    [dealer] dealer
    [supervisor] supervisor
    [admin] admin
   *[other] { $role }
}
log-out = Log out
clock-unsync = clock not synchronised
clock-unsync-why = Timestamps may be off. Play is ordered by sequence and is not affected.
shoe-number = shoe { $shoe }
shoe-out = out { $n }
shoe-left = left { $n }
shoe-burned = burned { $n }
shoe-cut = cut card: last round
provisional = open to disputes
provisional-why = Round { $round } can still be disputed.
publish-stopped = Not published: remote players and the floor see nothing of this table. The table plays on. Call the operator.
offline-title = CONNECTION LOST
offline-stale = This screen is not up to date: every control is off.
offline-connecting = Connecting…
offline-reconnecting = Reconnecting… the table goes on by itself; do not deal until this clears.
connecting = connecting…

## The callout: what the table waits for

next-card-to = Next card → { $to }
next-wait-remote = Wait: seat { $seat } (remote player) decides
place-seat-hand = seat { $seat }, hand { $hand }
place-dealer = dealer
place-burn = burn
expect-bets = Between rounds: open betting when the players are ready.
expect-bets-open = Betting is open: take the bets, then close betting.
expect-shuffle = The shoe is finished: shuffle, then tap New shoe.
expect-reveal_card = Show the card the shoe asks for, then burn it.
expect-burn_cards = Burn { $n ->
    [one] one card
   *[other] { $n } cards
}.
expect-deal_card = Deal the next card.
expect-insurance_answers = Ask about insurance: seat { $seat }.
expect-hand_card = Deal a card to seat { $seat }, hand { $hand }.
expect-decision = Seat { $seat }, hand { $hand } decides.
expect-dealer_card = The dealer draws.
expect-bonus = Bonus game: record the multiplier.
expect-players_insurance = Remote players are answering insurance.
expect-player_decisions = Remote players are deciding.
expect-draw_card = Deal the next card: { $hands ->
    [one] one hand asked
   *[other] { $hands } hands asked
}.
expect-unknown = Waiting for the table.

## Seats, hands and the dealer

seat-label = Seat { $seat }
dealer-label = Dealer
no-bet = no bet
no-bets-round = no bets this round
no-round = no round yet
hand-bust = BUST
hand-blackjack = BJ
hand-soft = soft { $total }
dealer-blackjack-no = dealer blackjack: no
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
outcome-cancelled = refunded
remote-badge = REMOTE
remote-asks = CARD!

## The round summary after settlement

summary-title = Round { $round } settled
summary-cancelled = Round { $round } cancelled: every bet refunded
summary-seat = Seat { $seat }
summary-behind = Behind seat { $seat }
summary-won = +{ $amount }
summary-lost = −{ $amount }
summary-even = even
summary-house-won = House won { $amount }
summary-house-lost = House paid out { $amount }
summary-house-even = House even
summary-dealer = Dealer { $total }
summary-dealer-bust = Dealer bust ({ $total })
summary-dealer-bj = Dealer blackjack

## Decisions

decision-for = Seat { $seat }, hand { $hand }
decision-none = No decision due
remote-decides = REMOTE: the player decides on their own screen.
remote-disabled = Off: seat { $seat } is a remote player's; they decide, not the panel.
deal-when-asked = Deal only when the banner asks for a card.
hit-hint = Hit = deal the next card
action-hit = Hit (deal)
action-stand = Stand
action-double = Double
action-split = Split
action-surrender = Surrender
insurance-question = Insurance? seat { $seat }
action-insurance = Insure
action-no_insurance = No insurance
action-even_money = Even money

## Table controls

open-betting = Open betting
close-betting = Close betting · deal
new-shoe = New shoe
deal-card = Deal a card
open-dispute = Dispute…
add-bet = +{ $amount }
call-supervisor = Call supervisor
call-supervisor-sent = Supervisor called: the table is locked until they come.

## Remote play

bets-close-in = Bets close in
seat-remote-decides = Seat { $seat } (remote) decides
remote-insurance = Insurance (remote)
remote-players-decide = Remote players decide
then-table-plays = then the table plays it
remote-seat-bet = seat { $seat } ✓
remote-seat-waiting = seat { $seat } …
remote-behind-bet = { $bet }/{ $all } behind bet
remote-bets = remote: { $list }
remote-hit = DEAL A CARD TO SEAT { $seat } (remote hit)

## Shoe integrity

shoe-alert = Shoe { $shoe } may not have been shuffled: { $reasons }. Call a supervisor to check the shuffle.

## Alarms (kinds from the table's reason; what to do)

alarm-title = ALARM: table locked
alarm-out-of-service = OUT OF SERVICE
alarm-todo = What to do: { $todo }
alarm-held = Held, not played: { $cards }
alarm-card_refused = Card { $card } came out of the shoe but does not fit: { $why }
alarm-card_refused-todo = Take the { $card } out of play and put it aside. A supervisor then clears the alarm; the dealer deals on.
alarm-supervisor_called = The dealer called the supervisor.
alarm-supervisor_called-todo = The supervisor comes to the table, decides, then clears the alarm.
alarm-shoe_disconnected = The shoe is disconnected.
alarm-shoe_disconnected-todo = Check the shoe's cable and power. Cards dealt meanwhile were not read: feed them again. Then a supervisor clears the alarm.
alarm-shoe_reconnected = The shoe came back after a disconnection.
alarm-shoe_reconnected-todo = Cards dealt while it was disconnected were not read: feed them again. Then a supervisor clears the alarm.
alarm-shoe_status = The shoe reports a problem: { $what }.
alarm-shoe_status-todo = Close the lid, free the jam or feed the misread card again. Then a supervisor clears the alarm.
alarm-shoe_fault = The shoe sent something unreadable.
alarm-shoe_fault-todo = Check the shoe and its cable. If a card was being read, feed it again. Then a supervisor clears the alarm.
alarm-button_stuck = A button on the button box is stuck.
alarm-button_stuck-todo = Free the button. Then a supervisor clears the alarm.
alarm-recovered = The table could not record for a while; cards read meanwhile are held.
alarm-recovered-todo = A supervisor decides: clear the alarm to take the held cards out of play, or resolve with Reject to play them in order.
alarm-other-todo = A supervisor checks the table, then clears the alarm.
out-of-service-todo = Repair or move the database and restart.
clear-alarm = Clear alarm
clear-alarm-who = A supervisor clears alarms.
clear-reason = Why is it safe to go on?
alarm-waiting = Play is locked: a supervisor clears this.

## Why an input was refused (the engine's codes)

why-card_not_expected = no card is due now
why-no_round = no round is in progress
why-impossible_card = the shoe cannot hold another copy of this card
why-action_not_allowed = that decision is not allowed for this hand now
why-not_your_turn = another seat is to act
why-burn_incomplete = the burn cards are not all out yet
why-shoe_finished = the shoe is finished: shuffle first
why-invalid_bet = the bet is not one the table takes

## Disputes

dispute-title = DISPUTE: round { $round } halted
dispute-raise-title = Dispute round { $round }
dispute-seat = Seat { $seat }
dispute-whole-table = The whole table
dispute-tap-seat = tap a seat, or the dealer for the whole table
dispute-what = What is wrong
dispute-tap-reason = tap a reason
dispute-raised-by = raised by { $name }
dispute-seat-suffix = (seat { $seat })
dispute-held = Held, not in play: { $cards }
dispute-waiting = Play is halted: a supervisor resolves this.
dispute-confirming = A supervisor is confirming: { $op }.
raise-dispute = Raise dispute
cancel = Cancel
keyboard = ⌨ keyboard
key-space = space
key-clear = clear
key-delete = delete
op-reject = Reject: play on
op-void = Void a card (burn it)
op-correct = Correct a card
op-move = Move a card
op-undo_decision = Undo last decision
op-cancel = Cancel round, refund all
op-short-reject = reject
op-short-void = void a card
op-short-correct = correct a card
op-short-move = move a card
op-short-undo_decision = undo the last decision
op-short-cancel = cancel the round
offer-no_decision = no decision was taken this round
offer-no_card = no card can change and the round still play
offer-not_cancellable = only the round in play or one still open to disputes can be cancelled
offer-correction_does_not_replay = the round would no longer play by the rules
offer-cannot_move = no order of the cards sends it there
offer-wrong_card = the screen is out of date
offer-card-off = this card cannot be { $op }: the round would no longer play
picked-card = The card: { $card }
picked-card-none = The card: ? (tap it on the table or in the list)
card-held = held
card-burned = burned
really-is = It really is
went-to = It went to: { $to }
pick-the-card = Tap: the card
went-to-dealer = the dealer
reason = Reason
reason-placeholder = what was seen
preview = Preview
confirm = Confirm
withdraw = Withdraw
preview-title = Preview: { $op }, proposed by { $name }
preview-reason = Reason: { $reason }
preview-second = needs a second supervisor
preview-cancelled = Round cancelled: every bet refunded
preview-settled = Round settled
preview-then = Then: { $next }
preview-voided = Taken out of play: { $cards }

preset-card-exposed = card exposed
preset-misread-card = misread card
preset-out-of-order = card dealt out of order
preset-wrong-decision = wrong decision taken
preset-player-disputes = player disputes the result
preset-exposed-on-camera = exposed on camera
preset-misread-by-shoe = misread by the shoe
preset-dealt-out-of-order = dealt out of order
preset-decision-by-mistake = decision taken by mistake
preset-misdeal = misdeal: refund all
preset-checked = checked at the table
preset-fault-fixed = fault fixed at the table
preset-card-aside = card put aside

## Login

login-title = Dealer panel
login-badge = Badge
login-secret = PIN or password
login-hint = Tap a field, then the keypad (or type)
login-missing = Enter your badge and PIN
login-refused = Badge or PIN not accepted
login-locked = Too many wrong attempts: this badge is locked until { $time }. Call a supervisor, or wait.
login-ended = Session ended: log in again

## Errors the server answers with (error-CODE): plain language and what to do

error-network = No connection to the table. Check the network cable or Wi-Fi; the table plays on.
error-unknown = Refused ({ $code }). Call a supervisor.
error-reason_required = Give a reason first: tap one, or type it on the keyboard.
error-malformed = The request was not understood. Reload the page; if it happens again, call a supervisor.
error-invalid_bet = That bet is not allowed: { $detail }
error-not_found = Not found. Reload the page.
error-locked = The table is locked by an alarm: a supervisor clears it first.
error-disputed = Play is halted by a dispute: a supervisor resolves it first.
error-round_provisional = The last round can still be disputed: wait a few seconds.
error-out_of_service = The table is out of service. Call a supervisor.
error-unavailable = The table cannot do that now. Try again; if it persists, call a supervisor.
error-stopped = The table has stopped. Call a supervisor.
error-betting_closed = Betting is closed.
error-not_taking_bets = The table is not taking bets now.
error-forbidden = Only a supervisor may do that.
error-unauthenticated = Log in again.
error-card_not_expected = No card is due now: take the card out of play.
error-impossible_card = The shoe cannot hold another copy of that card.
error-action_not_allowed = That decision is not allowed for this hand now.
error-not_your_turn = Another seat is to act.
error-seat_is_remote = That seat is a remote player's: they decide on their own screen.
error-burn_incomplete = Burn the remaining cards first.
error-shoe_finished = The shoe is finished: shuffle first.
error-no_round = There is no round to dispute.
error-round_final = That round can no longer be disputed: its window has closed.
error-dispute_open = A dispute is already open.
error-no_dispute = There is no open dispute.
error-no_proposal = No resolution is proposed yet: tap Preview first.
error-two_person_rule = Another supervisor must confirm this (two-person rule): they log in on this panel and tap Confirm.
error-proposal_changed = Another supervisor changed the proposal: check the new preview.
error-not_recorded = The table could not record it. Call a supervisor.
error-not_cancellable = This round cannot be cancelled.
error-condition_persists = The device still reports the fault: fix it first (cable, lid, jam, button), then clear.
error-not_locked = The table is not locked.
error-store_failed = The table could not record it. Call a supervisor.
error-wrong_card = The screen was out of date: pick the card again.
error-no_decision = No decision was taken this round: there is nothing to undo.
error-correction_does_not_replay = The round would no longer play by the rules after this resolution. Choose another.
error-cannot_move = No order of the round's cards sends that card there. Choose another hand.
error-json_required = The request was not understood. Reload the page.
error-too_many_logins = Too many logins at once: wait a moment.
error-too_many_attempts = Too many attempts: wait a moment.

# A seat's main bet in the table drawing (table.js), before its amount.
seat-bet = bet
